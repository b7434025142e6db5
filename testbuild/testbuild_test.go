package testbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

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
