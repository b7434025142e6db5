package sink_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

// fullDisk mounts a file system of 1 MiB (a tmpfs) at a new folder and fills it but
// for a filler file of 256 KiB, which it returns with the folder.
func fullDisk(t *testing.T) (dir, filler string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("mounting a small disk needs root")
	}
	dir = t.TempDir()
	require.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"))
	t.Cleanup(func() { assert.NoError(t, unix.Unmount(dir, unix.MNT_DETACH)) })
	filler = filepath.Join(dir, "filler")
	require.NoError(t, os.WriteFile(filler, make([]byte, 256<<10), 0o644))
	rest, err := os.Create(filepath.Join(dir, "rest"))
	require.NoError(t, err)
	_, err = rest.Write(make([]byte, 2<<20))
	require.ErrorIs(t, err, syscall.ENOSPC, "the disk is full")
	require.NoError(t, rest.Close())
	return dir, filler
}

// TestWriteFileOnAFullDisk writes a file on a full disk: without OnFull the write fails
// with ENOSPC and leaves nothing; with it, the function that frees the filler is called
// and the write is tried again, whole.
func TestWriteFileOnAFullDisk(t *testing.T) {
	dir, filler := fullDisk(t)
	data := make([]byte, 100<<10)
	path := filepath.Join(dir, "result.json")
	err := sink.NewFiles(nil).WriteFile(path, data, true)
	require.ErrorIs(t, err, syscall.ENOSPC)
	assert.NoFileExists(t, path)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary file is left")

	calls := 0
	full := func() bool {
		calls++
		return os.Remove(filler) == nil
	}
	require.NoError(t, sink.NewFiles(nil).OnFull(full).WriteFile(path, data, true))
	assert.Equal(t, 1, calls)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Len(t, got, len(data), "the file is whole")
}

// TestStreamKeepsWholeLinesOnAFullDisk writes stream-json lines until the disk is full:
// the write that found it full takes back what it wrote of its line, so the file holds
// whole lines, and once room is made the next line follows them.
func TestStreamKeepsWholeLinesOnAFullDisk(t *testing.T) {
	dir, filler := fullDisk(t)
	require.NoError(t, os.Remove(filler))
	f, err := os.Create(filepath.Join(dir, "stream.jsonl"))
	require.NoError(t, err)
	s := sink.NewStreamJSON(f, protocol.Envelope{})
	text := strings.Repeat("x", 3000)
	for err == nil {
		err = s.Write(protocol.Message{Kind: protocol.KindText, Text: text})
	}
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.NoError(t, os.Truncate(filepath.Join(dir, "rest"), 0))
	require.NoError(t, s.Write(protocol.Message{Kind: protocol.KindText, Text: "after"}))
	require.NoError(t, f.Close())
	b, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Greater(t, len(lines), 1)
	for i, line := range lines {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &v), "line %d of %d is whole: %.80q", i+1, len(lines), line)
	}
	assert.Contains(t, lines[len(lines)-1], `"after"`)
}

// TestWriteFileFillsItsReservedRoom: a file reserved for path before the disk filled
// (ReserveFile) takes the write of path then, with no byte or inode free: a result
// written when a tool has filled the disk needs nothing of it. A second write, with
// the reserve used, fails as any write on a full disk does; one larger than its
// reserve too, and leaves neither file.
func TestWriteFileFillsItsReservedRoom(t *testing.T) {
	for name, opts := range map[string]string{"bytes": "size=1m", "inodes": "size=4m,nr_inodes=8"} {
		t.Run(name, func(t *testing.T) {
			if os.Getuid() != 0 {
				t.Skip("mounting a small disk needs root")
			}
			dir := t.TempDir()
			require.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, opts))
			t.Cleanup(func() { assert.NoError(t, unix.Unmount(dir, unix.MNT_DETACH)) })
			path, big := filepath.Join(dir, "result.json"), filepath.Join(dir, "big.json")
			require.NoError(t, sink.ReserveFile(path, 16<<10))
			require.NoError(t, sink.ReserveFile(big, 4<<10))
			for i := 0; ; i++ { // fill the disk: bytes, or inodes
				f, err := os.Create(filepath.Join(dir, "fill"+strconv.Itoa(i)))
				if err != nil {
					require.ErrorIs(t, err, syscall.ENOSPC)
					break
				}
				_, err = f.Write(make([]byte, 8<<20))
				require.NoError(t, f.Close())
				if err != nil {
					require.ErrorIs(t, err, syscall.ENOSPC)
					if name == "bytes" {
						break
					}
				}
			}
			data := []byte(strings.Repeat("r", 16<<10)) // the whole reserve: the disk stays full
			require.NoError(t, sink.NewFiles(nil).WriteFile(path, data, true))
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, data, got, "the write took the reserve's room, and no more")
			info, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())

			assert.Error(t, sink.NewFiles(nil).WriteFile(path, []byte("again"), true), "the reserve is used")
			assert.Equal(t, data, mustRead(t, path), "the result stays")
			err = sink.NewFiles(nil).WriteFile(big, data, true)
			require.ErrorIs(t, err, syscall.ENOSPC, "larger than its reserve")
			assert.NoFileExists(t, big)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range entries {
				assert.False(t, strings.HasPrefix(e.Name(), "."), "left behind: %s", e.Name())
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}
