package escape_test

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// absent: the host path must not exist afterwards (it is removed if it does).
func absent(tmpl string) effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		p := x.expand(tmpl)
		_, err := os.Lstat(p)
		require.True(t, os.IsNotExist(err), "%s exists before the attempt", p)
		t.Cleanup(func() { _ = os.RemoveAll(p) })
		return func(string) (bool, string) {
			if _, err := os.Lstat(p); err == nil {
				return false, "created " + p
			}
			return true, ""
		}
	}
}

// unchanged: the host file must keep its content, mode, times and extended attributes;
// when it does not, it is restored for the attempts after this one.
func unchanged(tmpl string) effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		p := x.expand(tmpl)
		before, err := snapshot(p)
		require.NoError(t, err)
		return func(string) (bool, string) {
			after, err := snapshot(p)
			if err == nil && after == before {
				return true, ""
			}
			what := "changed " + p + ": " + before.diff(after, err)
			require.NoError(t, before.restore(p), "restore %s", p)
			return false, what
		}
	}
}

// hidden: the output must not hold s (a placeholder template).
func hidden(tmpl string) effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		s := x.expand(tmpl)
		return func(out string) (bool, string) {
			if strings.Contains(out, s) {
				return false, "the output holds " + s
			}
			return true, ""
		}
	}
}

// all: every effect must hold.
func all(effects ...effect) effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		checks := make([]func(string) (bool, string), len(effects))
		for i, e := range effects {
			checks[i] = e(t, fx, x)
		}
		return func(out string) (bool, string) {
			held, whats := true, []string(nil)
			for _, c := range checks {
				if ok, what := c(out); !ok {
					held, whats = false, append(whats, what)
				}
			}
			return held, strings.Join(whats, "; ")
		}
	}
}

// ran: the vector must have run (it creates {RAN} in the workspace), else the attempt
// proves nothing. It is a precondition, not an effect.
func ran(e effect) effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		check := e(t, fx, x)
		p := x.expand("{RAN}")
		return func(out string) (bool, string) {
			_, err := os.Lstat(p)
			require.NoError(t, err, "the vector did not run (no %s); output:\n%s", p, clip(out))
			return check(out)
		}
	}
}

// unsignalled: the kernel must have refused the signal of the attempt, which then
// prints no "signalled-" line.
func unsignalled() effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		line := x.expand("signalled-{MARK}")
		return func(out string) (bool, string) {
			if strings.Contains(out, line) {
				return false, "the kernel would deliver the signal"
			}
			return true, ""
		}
	}
}

// sleeperSurvives: the host's sleeper must still run, not stopped or traced.
func sleeperSurvives() effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		require.True(t, fx.sleeperAlive(), "the host's sleeper is not running before the attempt")
		return func(string) (bool, string) {
			if !fx.sleeperAlive() {
				fx.stopSleeper()
				fx.startSleeper(t) // for the attempts after this one
				return false, "the host's sleeper was killed or stopped"
			}
			status, _ := os.ReadFile("/proc/" + strconv.Itoa(fx.sleeper.Process.Pid) + "/status")
			if !strings.Contains(string(status), "TracerPid:\t0\n") {
				return false, "the host's sleeper is traced"
			}
			return true, ""
		}
	}
}

// fileState is what unchanged compares.
type fileState struct {
	content string
	mode    os.FileMode
	mtime   time.Time
	xattr   string
}

func snapshot(p string) (fileState, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return fileState{}, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return fileState{}, err
	}
	s := fileState{content: string(b), mode: fi.Mode(), mtime: fi.ModTime()}
	buf := make([]byte, 256)
	if n, err := unix.Lgetxattr(p, "user.escape", buf); err == nil {
		s.xattr = string(buf[:n])
	} else if !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.ENOTSUP) {
		return fileState{}, err
	}
	return s, nil
}

func (s fileState) diff(after fileState, err error) string {
	if err != nil {
		return "now " + err.Error()
	}
	var d []string
	if s.content != after.content {
		d = append(d, fmt.Sprintf("content %q -> %q", s.content, after.content))
	}
	if s.mode != after.mode {
		d = append(d, fmt.Sprintf("mode %v -> %v", s.mode, after.mode))
	}
	if !s.mtime.Equal(after.mtime) {
		d = append(d, fmt.Sprintf("mtime %v -> %v", s.mtime, after.mtime))
	}
	if s.xattr != after.xattr {
		d = append(d, fmt.Sprintf("xattr user.escape %q -> %q", s.xattr, after.xattr))
	}
	return strings.Join(d, ", ")
}

// restore puts a file back as it was.
func (s fileState) restore(p string) error {
	_ = os.Remove(p)
	if err := os.WriteFile(p, []byte(s.content), s.mode.Perm()); err != nil {
		return err
	}
	if err := os.Chmod(p, s.mode.Perm()); err != nil {
		return err
	}
	if err := unix.Lremovexattr(p, "user.escape"); err != nil && !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.ENOTSUP) {
		return err
	}
	if err := os.Chtimes(p, s.mtime, s.mtime); err != nil {
		return err
	}
	return os.Chown(p, syscall.Getuid(), syscall.Getgid())
}

// keepsItsLimits: the process the attempt left behind, named {MARK}, is still in each
// session cgroup of the worker's (the lines of /proc/PID/cgroup that name an
// agentrun-PID-N folder) and has the highest OOM score. It is killed afterwards.
func keepsItsLimits() effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		mark := x.expand("{MARK}")
		return func(out string) (bool, string) {
			var pids []int
			require.Eventually(t, func() bool { pids = processesWith(mark); return len(pids) > 0 }, 10*time.Second, 20*time.Millisecond,
				"the attempt left no process %s; output:\n%s", mark, clip(out))
			defer func() {
				for _, pid := range pids {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}()
			own, err := os.ReadFile("/proc/" + strconv.Itoa(fx.client.PID()) + "/cgroup")
			require.NoError(t, err)
			got, err := os.ReadFile("/proc/" + strconv.Itoa(pids[0]) + "/cgroup")
			require.NoError(t, err)
			for _, line := range strings.Split(strings.TrimSpace(string(own)), "\n") {
				if strings.Contains(line, "/agentrun-") && !strings.Contains("\n"+string(got), "\n"+line+"\n") {
					return false, "left the session's cgroup " + line + ": now in " + strings.ReplaceAll(string(got), "\n", " ")
				}
			}
			score, err := os.ReadFile("/proc/" + strconv.Itoa(pids[0]) + "/oom_score_adj")
			require.NoError(t, err)
			if s := strings.TrimSpace(string(score)); s != "1000" {
				return false, "its OOM score is " + s
			}
			return true, ""
		}
	}
}
