package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func init() {
	childScenarios["hide"] = hideChild
}

// hideChild runs in the namespaces of level strict. It binds $HIDE_DIR/host read-only at
// $HIDE_DIR/new/d, hides secret.txt in it the way $HIDE_HOW says (overlay or rebuild),
// says ready, and once its input has a line reports what it sees.
func hideChild() int {
	dir, how := os.Getenv("HIDE_DIR"), os.Getenv("HIDE_HOW")
	d := filepath.Join(dir, "new", "d")
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fail(err)
	}
	if err := unix.Mount(filepath.Join(dir, "host"), d, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fail(err)
	}
	if err := remount([]string{d}, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV); err != nil {
		return fail(err)
	}
	h := &hider{root: filepath.Join(dir, "new"), stage: filepath.Join(dir, "stage"), devNull: "/dev/null", mountinfo: "/proc/self/mountinfo"}
	var err error
	switch how {
	case "overlay":
		err = h.overlay(d, 0o755, []string{"secret.txt"}, false)
	case "rebuild":
		err = h.rebuild(d, 0o755, []string{"secret.txt"})
	default:
		err = fmt.Errorf("HIDE_HOW %q", how)
	}
	if err != nil {
		return fail(err)
	}
	report("ready", 1)
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fail(err)
	}
	for _, name := range []string{"secret.txt", "plain.txt", "sub/inner.txt", "late.txt"} {
		b, err := os.ReadFile(filepath.Join(d, name))
		if err != nil {
			report(name, "error "+err.Error())
			continue
		}
		report(name, strings.TrimSpace(string(b)))
	}
	report("write", fmt.Sprint(os.WriteFile(filepath.Join(d, "new.txt"), []byte("x"), 0o644)))
	return 0
}

// TestHideByName hides a file by each way a read-only folder can hide one, then, from
// the host, renames a new file over it and adds one: neither shows, while the rest of
// the folder does.
func TestHideByName(t *testing.T) {
	if err := Probe().Supports(LevelStrict); err != nil {
		t.Skip(err)
	}
	for _, how := range []string{"overlay", "rebuild"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			host := filepath.Join(dir, "host")
			for _, d := range []string{filepath.Join(host, "sub"), filepath.Join(dir, "new", "d"), filepath.Join(dir, "stage")} {
				require.NoError(t, os.MkdirAll(d, 0o755))
			}
			for name, content := range map[string]string{"secret.txt": "first-secret", "plain.txt": "plain", "sub/inner.txt": "inner"} {
				require.NoError(t, os.WriteFile(filepath.Join(host, name), []byte(content+"\n"), 0o644))
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"=hide", "HIDE_DIR="+dir, "HIDE_HOW="+how)
			cmd.SysProcAttr = SysProcAttr(LevelStrict)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			in, err := cmd.StdinPipe()
			require.NoError(t, err)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			lines := bufio.NewScanner(out)
			ready := lines.Scan() && lines.Text() == "ready=1"
			if ready {
				// As useradd replaces /etc/shadow: a new file renamed over it.
				require.NoError(t, os.WriteFile(filepath.Join(host, "new-secret"), []byte("second-secret\n"), 0o644))
				require.NoError(t, os.Rename(filepath.Join(host, "new-secret"), filepath.Join(host, "secret.txt")))
				require.NoError(t, os.WriteFile(filepath.Join(host, "late.txt"), []byte("late\n"), 0o644))
			}
			_, _ = in.Write([]byte("go\n"))
			got := map[string]string{}
			for lines.Scan() {
				if k, v, ok := strings.Cut(lines.Text(), "="); ok {
					got[k] = v
				}
			}
			require.NoError(t, cmd.Wait(), "child: %s", stderr.String())
			require.True(t, ready, "the child did not get ready: %s", stderr.String())
			assert.NotContains(t, got["secret.txt"], "first-secret", "ESCAPE: the hidden file shows")
			assert.NotContains(t, got["secret.txt"], "second-secret", "ESCAPE: the file renamed over the hidden one shows")
			assert.Contains(t, got["secret.txt"], "no such file", "the hidden file is not absent")
			assert.Equal(t, "plain", got["plain.txt"])
			assert.Equal(t, "inner", got["sub/inner.txt"])
			assert.Contains(t, got["write"], "read-only file system", "the folder is writable")
			if how == "overlay" {
				assert.Equal(t, "late", got["late.txt"], "an overlay shows what the host adds later")
			} else {
				assert.Contains(t, got["late.txt"], "no such file", "a rebuilt folder shows what it held when it was rebuilt")
			}
			_, err = os.Stat(filepath.Join(host, "new.txt"))
			assert.True(t, os.IsNotExist(err), "the child wrote to the host folder")
		})
	}
}
