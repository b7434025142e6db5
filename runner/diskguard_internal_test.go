package runner

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

var benchDir = flag.String("dir", "", "BenchmarkReserveInodes: the folder to make the reserve in")

// TestDiskGuardStopsUnderTheFloor drives the guard with a disk whose free space it is
// told (a one-method fake of the statfs reader): above the floors the run goes on, and
// the reserve holds its size on the real disk, and its inodes once the free ones come
// near what the run needs; under either floor the run stops once, with the disk's
// cause. The reserve stays until a write finds the disk full, which gets a part of it
// each time, and the rest goes when the run ends.
func TestDiskGuardStopsUnderTheFloor(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reserve is allocated on Linux")
	}
	const size, inodes = 10 << 30, 1 << 20
	for name, c := range map[string]struct {
		fill  func(*diskSpace)
		cause string
	}{
		"bytes":  {func(d *diskSpace) { d.avail = diskFloor(size) - 1 }, "had 63 MiB free"},
		"inodes": {func(d *diskSpace) { d.freeInodes = inodeFloor(inodes) - 1 }, "had 9999 free inodes (files) left"},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				var disk atomic.Pointer[diskSpace]
				disk.Store(&diskSpace{avail: 1 << 30, size: size, freeInodes: inodes - 1000, inodes: inodes})
				free := func(string) (diskSpace, error) { return *disk.Load(), nil }
				var causes []error
				stopped := make(chan struct{})
				g, err := newDiskGuard(dir, 10, free, func(err error) { causes = append(causes, err); close(stopped) }, zap.NewNop())
				require.NoError(t, err)
				reserve := filepath.Join(dir, ReserveFile)
				st, err := os.Stat(reserve)
				require.NoError(t, err)
				assert.Equal(t, int64(reserveFor(10, size)), st.Size())
				time.Sleep(10 * diskPoll) // the bubble's clock
				synctest.Wait()
				assert.NoDirExists(t, filepath.Join(dir, ReserveInodes), "a disk of many free inodes needs no reserve of them")
				near := *disk.Load()
				near.freeInodes = inodeMargin
				disk.Store(&near)
				time.Sleep(2 * diskPoll)
				synctest.Wait()
				held, err := os.ReadDir(filepath.Join(dir, ReserveInodes))
				require.NoError(t, err, "the free inodes came near what the run needs: it holds them")
				assert.Len(t, held, int(inodesFor(10, inodes))-1, "the folder is an inode of the reserve too")
				assert.Empty(t, causes, "the run stopped above the floor")
				full := *disk.Load()
				c.fill(&full)
				disk.Store(&full)
				<-stopped
				st, err = os.Stat(reserve)
				require.NoError(t, err, "the reserve stays until a write needs it")
				assert.Equal(t, int64(reserveFor(10, size)), st.Size())
				assert.True(t, g.Full(), "a write that finds the disk full retries into the reserve")
				st, err = os.Stat(reserve)
				require.NoError(t, err, "a part of the reserve is released, not the whole")
				assert.Equal(t, int64(reserveFor(10, size)-4<<20), st.Size())
				held, err = os.ReadDir(filepath.Join(dir, ReserveInodes))
				require.NoError(t, err)
				assert.Len(t, held, int(inodesFor(10, inodes))-1-16)
				for g.Full() { // a write that goes on finding the disk full takes the rest
				}
				assert.NoFileExists(t, reserve)
				assert.NoDirExists(t, filepath.Join(dir, ReserveInodes))
				g.close()
				require.Len(t, causes, 1, "the run stops once")
				assert.ErrorIs(t, causes[0], errDiskFull)
				assert.Contains(t, causes[0].Error(), "the disk of "+dir+" "+c.cause)
				assert.NoFileExists(t, reserve)
				assert.NoDirExists(t, filepath.Join(dir, ReserveInodes))
			})
		})
	}
}

// TestDiskGuardNeedsItsRoom: a disk without the room for the reserve and the floor
// fails the run before it starts, naming the folder and the figures; no reserve is
// left behind.
func TestDiskGuardNeedsItsRoom(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	free := func(string) (diskSpace, error) { return diskSpace{avail: 70 << 20, size: 250 << 30}, nil }
	_, err := newDiskGuard(dir, 1000, free, func(error) { t.Error("the run was stopped") }, zap.NewNop())
	require.Error(t, err)
	assert.Equal(t, "the disk of "+dir+" has 70 MiB free, and a run of 1000 sessions needs 104 MiB there: "+
		"40 MiB for their results and the run's reports, and 64 MiB kept free (1% of the disk, at most 64 MiB); "+
		"free some space or choose another --out", err.Error())
	assert.NoFileExists(t, filepath.Join(dir, ReserveFile))

	free = func(string) (diskSpace, error) {
		return diskSpace{avail: 1 << 30, size: 250 << 30, freeInodes: 12_000, inodes: 16 << 20}, nil
	}
	_, err = newDiskGuard(dir, 1000, free, func(error) { t.Error("the run was stopped") }, zap.NewNop())
	require.Error(t, err)
	assert.Equal(t, "the disk of "+dir+" has 12000 free inodes (files), and a run of 1000 sessions needs 13032 there: "+
		"3032 for their results and the run's reports, and 10000 kept free (1% of the disk's, at most 10,000); "+
		"remove some files or choose another --out", err.Error())
	assert.NoFileExists(t, filepath.Join(dir, ReserveFile))
	assert.NoDirExists(t, filepath.Join(dir, ReserveInodes))
}

func TestReserveFor(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		sessions   int
		disk, want uint64
		floor      uint64
	}{
		"one session, a large disk":   {sessions: 1, disk: 250 << 30, want: 8<<20 + 32<<10, floor: 64 << 20},
		"1,000 sessions":              {sessions: 1000, disk: 250 << 30, want: 8<<20 + 1000*32<<10, floor: 64 << 20},
		"100,000 sessions, capped":    {sessions: 100_000, disk: 250 << 30, want: 512 << 20, floor: 64 << 20},
		"a small disk: a tenth of it": {sessions: 10, disk: 16 << 20, want: 16 << 20 / 10, floor: 16 << 20 / 100},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, reserveFor(tt.sessions, tt.disk))
			assert.Equal(t, tt.floor, diskFloor(tt.disk))
			assert.Equal(t, min(32+3*uint64(tt.sessions), 1_000), inodesFor(tt.sessions, 10_000), "inodes")
		})
	}
}

// BenchmarkReserveInodes is what the reserve of inodes of a run of 1,000 sessions costs
// on the disk of the Go test's temporary folder (or -args -dir): made at its start,
// removed at its end.
func BenchmarkReserveInodes(b *testing.B) {
	dir := b.TempDir()
	if *benchDir != "" {
		dir = *benchDir
	}
	b.ReportAllocs()
	for b.Loop() {
		r := newInodeReserve(filepath.Join(dir, ReserveInodes), 1000, 1<<30)
		r.hold(0, zap.NewNop())
		require.True(b, r.held())
		r.release(zap.NewNop())
	}
}
