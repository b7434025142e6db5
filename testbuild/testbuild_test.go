package testbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// program writes a module with a main package that prints its argument to a new folder.
func program(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/hello\n\ngo 1.24\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(text), 0o644))
	return dir
}

const hello = "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"

func TestBuildKeepsWhatIsUpToDate(t *testing.T) {
	root := t.TempDir()
	t.Chdir(program(t, hello))
	newSet := func() *Set {
		return New("hello", Cmd{File: "hello", Args: []string{"build", "-buildvcs=false", "."}})
	}

	dir, err := newSet().build(root)
	require.NoError(t, err)
	wd, err := os.Getwd()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, key(wd), "hello"), dir)
	out, err := exec.Command(filepath.Join(dir, "hello")).Output()
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(out))
	first, err := os.Stat(filepath.Join(dir, "hello"))
	require.NoError(t, err)

	// Another test process of the package: the go command leaves the file as it is (it
	// touches it, so only the inode tells).
	again, err := newSet().build(root)
	require.NoError(t, err)
	second, err := os.Stat(filepath.Join(again, "hello"))
	require.NoError(t, err)
	assert.Equal(t, first.Sys().(*syscall.Stat_t).Ino, second.Sys().(*syscall.Stat_t).Ino, "relinked")

	// A change of the code is built.
	require.NoError(t, os.WriteFile("main.go", []byte("package main\n\nfunc main() { println(\"changed\") }\n"), 0o644))
	_, err = newSet().build(root)
	require.NoError(t, err)
	out, err = exec.Command(filepath.Join(dir, "hello")).CombinedOutput()
	require.NoError(t, err)
	assert.Equal(t, "changed\n", string(out))
}

func TestBuildFails(t *testing.T) {
	t.Chdir(program(t, "package main\n\nfunc main() { undefined() }\n"))
	s := New("broken", Cmd{File: "broken", Args: []string{"build", "."}})
	_, err := s.build(t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "testbuild broken: go build -o ")
	assert.Contains(t, err.Error(), "undefined: undefined", "the compiler's output")
}

func TestKeySeparatesCheckouts(t *testing.T) {
	a, b := key("/src/a/agentrun/runner"), key("/src/b/agentrun/runner")
	assert.NotEqual(t, a, b)
	assert.Equal(t, a, key("/src/a/agentrun/runner"))
	assert.Regexp(t, `^runner-[0-9a-f]{12}$`, a)
}

// TestPrune checks which package folders' sets a build removes: those of checkouts
// that are gone and those unused for staleAfter, unless a test process holds a lock of
// theirs; never the building package's own.
func TestPrune(t *testing.T) {
	root, live := t.TempDir(), t.TempDir()
	now := time.Now()
	old := now.Add(-staleAfter - time.Hour)
	cases := map[string]struct {
		checkout string // "" writes no checkout file
		used     time.Time
		locked   bool
		kept     bool
	}{
		"own, gone and old":  {filepath.Join(live, "gone"), old, false, true},
		"checkout gone":      {filepath.Join(live, "gone"), now, false, false},
		"in use":             {live, now, false, true},
		"unused for long":    {live, old, false, false},
		"unused but locked":  {live, old, true, true},
		"gone but locked":    {filepath.Join(live, "gone"), now, true, true},
		"no checkout, fresh": {"", now, false, true},
		"no checkout, old":   {"", old, false, false},
	}
	for name, tc := range cases {
		dir := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "set"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "set", "bin"), []byte("x"), 0o755))
		if tc.checkout != "" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, checkoutFile), []byte(tc.checkout), 0o644))
		}
		if tc.locked {
			unlock, err := lock(filepath.Join(dir, "set", ".lock"))
			require.NoError(t, err)
			t.Cleanup(unlock)
		} else {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "set", ".lock"), nil, 0o644))
		}
		require.NoError(t, os.Chtimes(dir, tc.used, tc.used))
	}
	prune(root, "own, gone and old", now)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := os.Stat(filepath.Join(root, name, "set", "bin"))
			if tc.kept {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, os.ErrNotExist)
			}
		})
	}
}

func TestBuildMarksItsCheckout(t *testing.T) {
	root := t.TempDir()
	wd := program(t, hello)
	t.Chdir(wd)
	_, err := New("hello", Cmd{File: "hello", Args: []string{"build", "-buildvcs=false", "."}}).build(root)
	require.NoError(t, err)
	real, err := os.Getwd()
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, key(real), checkoutFile))
	require.NoError(t, err)
	assert.Equal(t, real, string(b))
}
