package tools

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentrun/agentrun/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// swapCalls is how many tool calls race against a flipping link.
const swapCalls = 3000

// swapFixture is a workspace with an "outside" directory next to it.
type swapFixture struct {
	env     *Env
	outside string
}

func newSwapFixture(t *testing.T, mode string) swapFixture {
	t.Helper()
	parent := tempDir(t)
	ws, outside := filepath.Join(parent, "ws"), filepath.Join(parent, "outside")
	writeTree(t, ws, map[string]string{"inside.txt": "inside\n", "insidedir/keep.txt": "keep\n"})
	writeTree(t, outside, map[string]string{"target.txt": "outside SECRET original\n", ".ssh/config": "Host x SECRET-SSH\n", "notes.txt": "SECRET notes\n"})
	p, err := policy.Parse(mode)
	require.NoError(t, err)
	return swapFixture{env: &Env{Workspace: ws, Home: tempDir(t), Policy: p}, outside: outside}
}

// flipLink makes link a symbolic link to targets[0], then swaps it atomically
// between the two targets until the returned stop is called.
func flipLink(t *testing.T, link string, targets [2]string) (stop func()) {
	t.Helper()
	require.NoError(t, os.Symlink(targets[0], link))
	tmp := link + ".flip"
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			_ = os.Remove(tmp)
			if os.Symlink(targets[i%2], tmp) == nil {
				_ = os.Rename(tmp, link)
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// snapshot returns every file below dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	require.NoError(t, err)
	return files
}

// TestSymlinkSwapCannotEscape: a link flipped between a workspace file and a file
// outside while the tools run never lets a Write or Edit change anything outside, nor
// a Read or Grep show a secret from there. The policy checks the path before the
// call; the tools check again what they opened.
func TestSymlinkSwapCannotEscape(t *testing.T) {
	if testing.Short() {
		t.Skip("races symlink swaps for seconds (not with -short)")
	}
	t.Parallel()
	tests := []struct {
		name    string
		mode    string
		link    string
		targets [2]string // relative to the workspace
		tool    Tool
		input   in
	}{
		{name: "Write through file link", mode: policy.DefaultMode, link: "link.txt", targets: [2]string{"inside.txt", "../outside/target.txt"},
			tool: Write{}, input: in{"path": "link.txt", "content": "pwned\n"}},
		{name: "Write new file through dir link", mode: policy.DefaultMode, link: "dir", targets: [2]string{"insidedir", "../outside"},
			tool: Write{}, input: in{"path": "dir/new.txt", "content": "pwned\n"}},
		{name: "Write new dirs through dir link", mode: policy.DefaultMode, link: "dir", targets: [2]string{"insidedir", "../outside"},
			tool: Write{}, input: in{"path": "dir/a/b/new.txt", "content": "pwned\n"}},
		{name: "Write through dangling link", mode: policy.DefaultMode, link: "new.txt", targets: [2]string{"made.txt", "../outside/made.txt"},
			tool: Write{}, input: in{"path": "new.txt", "content": "pwned\n"}},
		{name: "Edit through file link", mode: policy.DefaultMode, link: "link.txt", targets: [2]string{"inside.txt", "../outside/target.txt"},
			tool: Edit{}, input: in{"path": "link.txt", "old_string": "SECRET", "new_string": "pwned"}},
		{name: "Read ssh config", mode: policy.DefaultMode, link: "link.txt", targets: [2]string{"inside.txt", "../outside/.ssh/config"},
			tool: Read{}, input: in{"path": "link.txt"}},
		{name: "Read without external read", mode: "0007", link: "link.txt", targets: [2]string{"inside.txt", "../outside/notes.txt"},
			tool: Read{}, input: in{"path": "link.txt"}},
		{name: "Grep through dir link", mode: "0007", link: "dir", targets: [2]string{"insidedir", "../outside"},
			tool: Grep{}, input: in{"pattern": "SECRET", "path": "dir"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newSwapFixture(t, tt.mode)
			before := snapshot(t, f.outside)
			stop := flipLink(t, filepath.Join(f.env.Workspace, tt.link), tt.targets)
			var leaked []string
			for range swapCalls {
				res := call(t, tt.tool, f.env, tt.input)
				if strings.Contains(res.Content, "SECRET") {
					leaked = append(leaked, res.Content)
				}
			}
			stop()
			assert.Equal(t, before, snapshot(t, f.outside), "nothing outside the workspace changed")
			assert.Empty(t, leaked, "no secret from outside was shown")
		})
	}
}
