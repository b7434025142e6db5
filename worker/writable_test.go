package worker_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/worker"
)

// TestWritableSymlink gives the tools a writable path that is a symbolic link to a
// folder under /tmp (a build cache shared by the tests, say): what they write through
// the link lands in the host's folder, although the strict sandbox's own /tmp is
// private, and whether the link is absolute or relative.
func TestWritableSymlink(t *testing.T) {
	t.Parallel()
	for _, level := range []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock} {
		for _, relative := range []bool{false, true} {
			name := string(level) + "/absolute"
			if relative {
				name = string(level) + "/relative"
			}
			t.Run(name, func(t *testing.T) {
				if err := sandbox.Probe().Supports(level); err != nil {
					t.Skipf("this machine cannot run level %s: %v", level, err)
				}
				home, err := filepath.EvalSymlinks(t.TempDir())
				require.NoError(t, err)
				target := filepath.Join(home, "shared", "go-build")
				require.NoError(t, os.MkdirAll(target, 0o755))
				link := filepath.Join(home, "ws", ".cache", "go-build")
				require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
				to := target
				if relative {
					to = filepath.Join("..", "..", "shared", "go-build")
				}
				require.NoError(t, os.Symlink(to, link))
				ws := filepath.Join(home, "ws")
				m, err := sandbox.ParseMode("0467")
				require.NoError(t, err)
				cfg := worker.Config{Spec: sandbox.Spec{Level: level, Mode: m, Workspace: filepath.Join(ws, "project"),
					Home: ws, Writable: []string{link}},
					Env: []string{"PATH=/usr/bin:/bin", "HOME=" + ws}, BashMode: "0467", Timeout: time.Minute, IdleExit: time.Hour}
				require.NoError(t, os.Mkdir(cfg.Spec.Workspace, 0o755))
				cfg.Hidden = cfg.Spec.Hidden()
				c := worker.New(cfg, os.Args[0], nil)
				defer func() { assert.NoError(t, c.Close()) }()
				r := c.Exec(context.Background(), "echo hi > ~/.cache/go-build/made.txt", time.Minute, 0)
				require.NoError(t, r.Err)
				require.Zero(t, r.ExitCode, r.Output)
				b, err := os.ReadFile(filepath.Join(target, "made.txt"))
				require.NoError(t, err, "the file reached the link's target on the host")
				assert.Equal(t, "hi\n", string(b))
			})
		}
	}
}

// confinedLevels runs body at each confining level this machine has, with a folder of
// its own (symbolic links resolved).
func confinedLevels(t *testing.T, body func(t *testing.T, level sandbox.Level, root string)) {
	for _, level := range []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock} {
		t.Run(string(level), func(t *testing.T) {
			if err := sandbox.Probe().Supports(level); err != nil {
				t.Skipf("this machine cannot run level %s: %v", level, err)
			}
			root, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			body(t, level, root)
		})
	}
}

// startIn returns a worker of spec (its level, workspace and home set) under bash_mode
// mode, closed when the test ends; at landlock its TMPDIR is made under root.
func startIn(t *testing.T, root, mode string, spec sandbox.Spec) *worker.Client {
	m, err := sandbox.ParseMode(mode)
	require.NoError(t, err)
	spec.Mode = m
	cfg := worker.Config{Spec: spec, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + spec.Home}, BashMode: mode,
		Timeout: time.Minute, IdleExit: time.Hour}
	if spec.Level == sandbox.LevelLandlock {
		cfg.Spec.TempDir = filepath.Join(root, "tmp")
		require.NoError(t, os.Mkdir(cfg.Spec.TempDir, 0o755))
	}
	cfg.Hidden = cfg.Spec.Hidden()
	c := worker.New(cfg, os.Args[0], nil)
	t.Cleanup(func() { assert.NoError(t, c.Close()) })
	return c
}

// TestWritableFile gives the tools one writable file outside the workspace (as an
// external scope with write rights gives /.dockerenv in a container): the worker
// starts, the file takes what they append, and its folder takes nothing new.
func TestWritableFile(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, root string) {
		file := filepath.Join(root, "outside", "notes.txt")
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, []byte("before\n"), 0o644))
		ws := filepath.Join(root, "ws")
		require.NoError(t, os.Mkdir(ws, 0o755))
		c := startIn(t, root, "0467", sandbox.Spec{Level: level, Workspace: ws, Home: ws, Writable: []string{file}})
		r := c.Exec(context.Background(), "echo after >> "+file+"; touch "+filepath.Join(filepath.Dir(file), "new.txt"), time.Minute, 0)
		require.NoError(t, r.Err)
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, "before\nafter\n", string(b), "the writable file did not take the line: %s", r.Output)
		_, err = os.Stat(filepath.Join(filepath.Dir(file), "new.txt"))
		assert.True(t, os.IsNotExist(err), "a file was made beside the writable one")
	})
}

// TestWorkspaceInHiddenFolder puts the workspace in a read-only home that holds a
// hidden folder (~/.ssh), as ~/project is: the home's hiding must leave the workspace
// below it writable, and the hidden folder out of sight.
func TestWorkspaceInHiddenFolder(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, root string) {
		home := filepath.Join(root, "home")
		ws := filepath.Join(home, "project")
		require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o755))
		require.NoError(t, os.MkdirAll(ws, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte("IdentityFile ssh-secret\n"), 0o644))
		c := startIn(t, root, "0467", sandbox.Spec{Level: level, Workspace: ws, Home: home,
			External: append(sandbox.ExternalDirs(), root)})
		r := c.Exec(context.Background(), "cd ~/project && mkdir -p sub && echo made > sub/new.txt; cat ~/.ssh/config", time.Minute, 0)
		require.NoError(t, r.Err)
		b, err := os.ReadFile(filepath.Join(ws, "sub", "new.txt"))
		require.NoError(t, err, "the workspace below the home took no file: %s", r.Output)
		assert.Equal(t, "made\n", string(b))
		assert.NotContains(t, r.Output, "ssh-secret", "ESCAPE: the hidden folder shows")
	})
}

// TestWorkspaceIsHome runs the tools in a workspace that is also their home, holding
// none of the credential stores a home hides (~/.ssh, ~/.aws, ...): the workspace's own
// folder stays theirs to write and list, at every level.
func TestWorkspaceIsHome(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, root string) {
		ws := filepath.Join(root, "ws")
		require.NoError(t, os.Mkdir(ws, 0o755))
		c := startIn(t, root, "0407", sandbox.Spec{Level: level, Workspace: ws, Home: ws})
		r := c.Exec(context.Background(), "cd ~ && echo made > new.txt && ls", time.Minute, 0)
		require.NoError(t, r.Err)
		assert.Contains(t, r.Output, "new.txt", "the workspace could not be listed")
		b, err := os.ReadFile(filepath.Join(ws, "new.txt"))
		require.NoError(t, err, "the workspace took no file: %s", r.Output)
		assert.Equal(t, "made\n", string(b))
	})
}
