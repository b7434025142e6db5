package tools

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// redirectStd points this process's stdout and stderr at files until the test ends,
// so that a tool writing to them shows in the files; it returns the files.
func redirectStd(t *testing.T) (stdout, stderr *os.File) {
	t.Helper()
	dir := tempDir(t)
	files := [2]*os.File{}
	for i, fd := range []int{1, 2} {
		saved, err := unix.Dup(fd)
		require.NoError(t, err)
		f, err := os.Create(filepath.Join(dir, strconv.Itoa(fd)))
		require.NoError(t, err)
		require.NoError(t, unix.Dup2(int(f.Fd()), fd))
		t.Cleanup(func() {
			assert.NoError(t, unix.Dup2(saved, fd))
			assert.NoError(t, unix.Close(saved))
			assert.NoError(t, f.Close())
		})
		files[i] = f
	}
	return files[0], files[1]
}

// victim is a file this process holds open, as the worker holds its protocol pipe.
type victim struct {
	path string
	fd   string // its descriptor number
}

const victimContent = "protocol frame SECRET-FD-CONTENT\n"

func newVictim(t *testing.T) victim {
	t.Helper()
	p := filepath.Join(tempDir(t), "held.txt")
	require.NoError(t, os.WriteFile(p, []byte(victimContent), 0o644))
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, f.Close()) })
	return victim{path: p, fd: strconv.Itoa(int(f.Fd()))}
}

// TestMagicLinksRefused: with every bit granted, Write, Edit and Read still cannot
// reach this process's own open files, its output or its root through /dev/fd,
// /dev/stdout or /proc magic links. The effect is checked: the held file and the
// redirected stdout and stderr are unchanged, Read returns none of the held content.
func TestMagicLinksRefused(t *testing.T) {
	v := newVictim(t)
	pid := strconv.Itoa(os.Getpid())
	tests := []struct {
		name string
		path string
	}{
		{name: "dev stdout", path: "/dev/stdout"},
		{name: "dev stderr", path: "/dev/stderr"},
		{name: "dev fd 1", path: "/dev/fd/1"},
		{name: "dev fd of held file", path: "/dev/fd/" + v.fd},
		{name: "proc self fd", path: "/proc/self/fd/" + v.fd},
		{name: "proc pid fd", path: "/proc/" + pid + "/fd/" + v.fd},
		{name: "proc thread-self fd", path: "/proc/thread-self/fd/" + v.fd},
		{name: "proc self root", path: "/proc/self/root" + v.path},
		{name: "proc self cwd", path: "/proc/self/cwd/" + filepath.Base(v.path)},
		{name: "workspace link to proc fd", path: "fdlink"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(filepath.Dir(v.path))
			env := newEnv(t, "7777")
			require.NoError(t, os.Symlink("/proc/self/fd/"+v.fd, filepath.Join(env.Workspace, "fdlink")))
			stdout, stderr := redirectStd(t)
			write := call(t, Write{}, env, in{"path": tt.path, "content": "forged line\n"})
			edit := call(t, Edit{}, env, in{"path": tt.path, "old_string": "protocol", "new_string": "forged"})
			read := call(t, Read{}, env, in{"path": tt.path})
			for _, res := range []Result{write, edit, read} {
				assert.True(t, res.IsError, res.Content)
				assert.Equal(t, "refusing "+tt.path+": it resolves through a /proc magic link to an open file of agentrun", res.Content)
			}
			got, err := os.ReadFile(v.path)
			require.NoError(t, err)
			assert.Equal(t, victimContent, string(got), "the held file is untouched")
			for _, f := range []*os.File{stdout, stderr} {
				fi, err := f.Stat()
				require.NoError(t, err)
				assert.Zero(t, fi.Size(), "nothing was written to %s", f.Name())
			}
		})
	}
}

// TestMagicLinksNotWalked: Grep and Glob under /proc/self/fd find none of the held
// file's content, and a walk through /proc/self/root is refused.
func TestMagicLinksNotWalked(t *testing.T) {
	v := newVictim(t)
	env := newEnv(t, "7777")
	res := call(t, Grep{}, env, in{"pattern": "SECRET-FD-CONTENT", "path": "/proc/self/fd"})
	assert.NotContains(t, res.Content, "SECRET-FD-CONTENT")
	assert.Contains(t, res.Content, "No matches found")
	res = call(t, Grep{}, env, in{"pattern": "SECRET-FD-CONTENT", "path": "/proc/self/root" + filepath.Dir(v.path)})
	assert.True(t, res.IsError)
	assert.NotContains(t, res.Content, "SECRET-FD-CONTENT")
	res = call(t, Glob{}, env, in{"pattern": "*.txt", "path": "/proc/self/root" + filepath.Dir(v.path)})
	assert.True(t, res.IsError)
	assert.NotContains(t, res.Content, "held.txt")
}

// TestOpenCheckedRefusesMagicLinks: the fallback for kernels without openat2 refuses
// the same paths, and opens ordinary ones.
func TestOpenCheckedRefusesMagicLinks(t *testing.T) {
	v := newVictim(t)
	pid := strconv.Itoa(os.Getpid())
	dir := tempDir(t)
	require.NoError(t, os.Symlink("/dev/stdout", filepath.Join(dir, "out")))
	tests := map[string]bool{
		"/dev/stdout":                      true,
		"/dev/fd/" + v.fd:                  true,
		"/proc/self/fd/" + v.fd:            true,
		"/proc/self/root" + v.path:         true,
		"/proc/self/cwd":                   true,
		"/proc/self/exe":                   true,
		"/proc/self/task/" + pid + "/fd/0": true,
		filepath.Join(dir, "out"):          true,
		v.path:                             false,
		"/dev/null":                        false,
		"/proc/self/status":                false,
		filepath.Join(dir, "missing.txt"):  false,
	}
	for p, want := range tests {
		assert.Equal(t, want, viaMagicLink(p), p)
		if !want {
			continue
		}
		f, err := openChecked(p, os.O_RDONLY, 0)
		if !assert.ErrorIs(t, err, errMagicLink, p) {
			_ = f.Close()
		}
	}
	f, err := openChecked(v.path, os.O_RDONLY, 0)
	require.NoError(t, err)
	assert.NoError(t, f.Close())
}
