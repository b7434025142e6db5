package escape_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
)

// landlockSignals is why level landlock cannot keep signals in on an older kernel: the
// Landlock signal scope came with ABI 6 (Linux 6.12), and without a pid namespace a
// tool may signal every process of the worker's uid on the host.
const landlockSignals = "no Landlock signal scope before ABI 6 and no pid namespace: every process of the uid can be signalled"

// landlockScopes says whether this kernel's Landlock scopes signals (ABI 6).
var landlockScopes = sandbox.Probe().LandlockABI >= 6

// survivors are commands that leave a process behind, named by {MARK} in its command
// line; after the client's Close none may be left on the host.
var survivors = []attempt{
	{name: "setsid", cmd: `setsid bash -c 'exec -a {MARK} sleep 1000' >/dev/null 2>&1 &`},
	{name: "env -i setsid", cmd: `env -i /usr/bin/setsid /bin/bash -c 'exec -a {MARK} sleep 1000' >/dev/null 2>&1 &`},
	{name: "nohup", cmd: `nohup bash -c 'exec -a {MARK} sleep 1000' >/dev/null 2>&1 &`},
	{name: "double fork", cmd: `( (bash -c 'exec -a {MARK} sleep 1000' &) & ) >/dev/null 2>&1`},
	{name: "disown", cmd: `bash -c 'exec -a {MARK} sleep 1000' >/dev/null 2>&1 & disown`},
	{name: "ignores signals", cmd: `setsid bash -c 'trap "" HUP INT TERM; exec -a {MARK} sleep 1000' >/dev/null 2>&1 &`},
	{name: "python daemon", needs: "python3", cmd: `python3 - <<'EOF'
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.closerange(0, 1024)
        os.execvp('sleep', ['{MARK}', '1000'])
    os._exit(0)
os.wait()
EOF`},
	{name: "respawner", cmd: `cat > resp-{NAME}.sh <<'EOF'
while :; do setsid bash -c 'exec -a {MARK}-child sleep 1000' & sleep 0.05; done
EOF
setsid bash -c 'exec -a {MARK} bash resp-{NAME}.sh' >/dev/null 2>&1 &`},
}

func TestNoProcessOutlivesClose(t *testing.T) {
	levels(t, false, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0467"})
		var marks []string
		for _, a := range survivors {
			t.Run(a.name, func(t *testing.T) {
				if a.needs != "" && !installed(a.needs) {
					t.Skipf("%s is not installed", a.needs)
				}
				x := fx.expander(a.name)
				mark := x.expand("{MARK}")
				r := fx.bash(t, x.expand(a.cmd), 20)
				require.False(t, r.IsError, r.Content)
				require.Eventually(t, func() bool { return len(processesWith(mark)) > 0 }, 10*time.Second, 20*time.Millisecond,
					"the attempt started no process %s; output:\n%s", mark, r.Content)
				marks = append(marks, mark)
			})
		}
		require.NoError(t, fx.client.Close())
		for _, mark := range marks {
			assert.Eventually(t, func() bool { return len(processesWith(mark)) == 0 }, 10*time.Second, 20*time.Millisecond,
				"ESCAPE at level %s: process %s outlived Close: pids %v", level, mark, processesWith(mark))
		}
		assert.True(t, fx.sleeperAlive(), "the host's sleeper died with the sandbox")
	})
}

// signalAttempts reach for processes outside the sandbox: the host's sleeper must
// survive, untraced.
var signalAttempts = []attempt{
	// The runner (this test, the worker's parent) and its group: no signal can reach
	// them at any level, before ABI 6 because the seccomp filter guards the worker's
	// ancestors. Signal 0 asks the kernel whether a signal would be delivered and
	// delivers none, so a failure leaves the test running.
	{name: "signal the runner", cmd: "kill -0 {RUNNER} && echo signalled-{MARK}", effect: unsignalled(), strict: true, landlock: true, off: true},
	{name: "signal the runner's group", cmd: "kill -0 -- -{RUNNERGROUP} && echo signalled-{MARK}", effect: unsignalled(), strict: true, landlock: true, off: true},
	{name: "signal the runner through its /proc folder", needs: "python3", cmd: `python3 -c '
import os, signal
fd = os.open("/proc/{RUNNER}", os.O_RDONLY | os.O_DIRECTORY)
signal.pidfd_send_signal(fd, 0)
print("signalled-{MARK}")'`, effect: unsignalled(), strict: true, landlock: true},
	{name: "kill host process", cmd: "kill -9 {SLEEPER}", effect: sleeperSurvives(), strict: true, landlock: landlockScopes, gap: landlockSignals},
	{name: "kill by name", cmd: "pkill -9 -f {SLEEPNAME}", effect: sleeperSurvives(), strict: true, landlock: landlockScopes, gap: landlockSignals},
	{name: "strace attach", needs: "strace", cmd: "timeout 5 strace -p {SLEEPER} -e inject=clock_nanosleep,restart_syscall:signal=KILL",
		effect: sleeperSurvives(), strict: true, landlock: true},
	{name: "python ptrace attach", needs: "python3", cmd: `python3 - <<'EOF'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, {SLEEPER}, 0, 0)  # PTRACE_ATTACH
print('attach', r, os.strerror(ctypes.get_errno()))
if r == 0:
    os.waitpid({SLEEPER}, 0)
    print('kill', libc.ptrace(8, {SLEEPER}, 0, 0))  # PTRACE_KILL
EOF`, effect: sleeperSurvives(), strict: true, landlock: true},
	{name: "process_vm_readv", needs: "python3", cmd: `python3 - <<'EOF'
import ctypes
class iovec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
buf = ctypes.create_string_buffer(4096)
local, remote = iovec(ctypes.addressof(buf), 4096), iovec(0x400000, 4096)
n = ctypes.CDLL(None, use_errno=True).process_vm_readv({SLEEPER}, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
print('READ-OK' if n > 0 else 'refused %d' % ctypes.get_errno())
EOF`, effect: all(sleeperSurvives(), hidden("READ-OK")), strict: true, landlock: true},
	{name: "unshare -r", needs: "unshare", cmd: "unshare -r touch {RAN}", effect: absent("{RAN}"), strict: true, landlock: true},
	{name: "unshare mount", needs: "unshare", cmd: "unshare -m --propagation private touch {RAN}", effect: absent("{RAN}"), strict: true, landlock: true},
	{name: "unshare pid", needs: "unshare", cmd: "unshare -p -f --mount-proc touch {RAN}", effect: absent("{RAN}"), strict: true, landlock: true},
	{name: "nsenter host init", needs: "nsenter", cmd: "nsenter -t 1 -a touch {RAN}; nsenter -t {TESTPID} -m -u -n -p touch {RAN}", effect: absent("{RAN}"), strict: true, landlock: true},
	{name: "mount tmpfs", cmd: "mkdir -p mnt-{NAME} && mount -t tmpfs none mnt-{NAME} && touch {RAN}", effect: absent("{RAN}"), strict: true, landlock: true},
	{name: "umount mask", cmd: "umount -l {HOME}/.ssh && touch {RAN}; umount -l / && touch {RAN}", effect: absent("{RAN}"), strict: true, landlock: true},
	{name: "chroot", cmd: "/usr/sbin/chroot . /bin/true && touch {RAN}; /usr/sbin/chroot / /bin/true && touch {RAN}", effect: absent("{RAN}"), strict: true, landlock: true},
	{name: "sethostname", cmd: "hostname escape-{NAME}; echo escape > /proc/sys/kernel/hostname", effect: sameHostname(), strict: true, landlock: true},
	// Out of the session's cgroups (its memory and pids limits) into the machine's, and
	// down from the highest OOM score; the process left behind shows what it got.
	{name: "leave the session's cgroups and OOM score", cmd: `(for f in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/unified/cgroup.procs /sys/fs/cgroup/memory/cgroup.procs /sys/fs/cgroup/pids/cgroup.procs; do echo $BASHPID > $f; done; echo 0 > /proc/self/oom_score_adj; exec -a {MARK} sleep 30) >/dev/null 2>&1 &`,
		effect: keepsItsLimits(), strict: true, landlock: true},
}

func TestSignalsAndPrivileges(t *testing.T) {
	levels(t, false, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0467"})
		runTable(t, fx, signalAttempts)
	})
}

// TestKillAll sends SIGKILL to every process the sandbox may signal: at level strict
// those of its pid namespace, at level landlock those of its Landlock domain, the
// session's worker included, which the client then starts again. Level landlock runs
// only with the signal scope (ABI 6): it shares the host's pid namespace, and a failure
// there would kill every process of the uid on the machine.
func TestKillAll(t *testing.T) {
	levels(t, false, func(t *testing.T, level sandbox.Level) {
		if level == sandbox.LevelLandlock && !landlockScopes {
			t.Skip("no Landlock signal scope before ABI 6: kill -9 -1 would reach every process of the uid")
		}
		killAll(t, level)
	})
}

func killAll(t *testing.T, level sandbox.Level) {
	fx := newFixture(t, level, options{mode: "0467"})
	x := fx.expander("kill all")
	r := fx.bash(t, x.expand("bash -c 'exec -a {MARK} sleep 1000' & kill -9 -1; echo survived"), 20)
	t.Logf("kill -9 -1: %s", r.Content)
	assert.True(t, fx.sleeperAlive(), "ESCAPE: kill -9 -1 in the sandbox killed the host's sleeper")
	out := fx.bash(t, "echo still-working", 20)
	assert.Equal(t, "still-working\n", out.Content, "the client does not work after kill -9 -1")
	require.NoError(t, fx.client.Close())
	assert.Empty(t, processesWith(x.expand("{MARK}")))
}

// TestForkBomb runs a fork bomb at level strict, where the user namespace gives the
// session its own RLIMIT_NPROC count. The kernel never enforces RLIMIT_NPROC for the
// host's uid 0 (even mapped into a namespace), so as root nothing would contain it: it
// is skipped then rather than let it exhaust the machine's pids. It never runs at level
// landlock (one count for the uid machine-wide; uid 0 not limited at all).
func TestForkBomb(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("running as root: RLIMIT_NPROC is not enforced for the host's uid 0, so a fork bomb cannot be contained")
	}
	if err := sandbox.Probe().Supports(sandbox.LevelStrict); err != nil {
		t.Skipf("this machine cannot run level strict: %v", err)
	}
	fx := newFixture(t, sandbox.LevelStrict, options{mode: "0467"})
	r := fx.bash(t, ":(){ :|:& };:", 5)
	t.Logf("fork bomb: %.300s", r.Content)
	out := fx.bash(t, "echo still-working", 20)
	assert.Equal(t, "still-working\n", out.Content, "the client does not work after the fork bomb")
	require.NoError(t, fx.client.Close())
	assert.True(t, fx.sleeperAlive())
}

// sameHostname: the host's name must not change.
func sameHostname() effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		before, err := os.Hostname()
		require.NoError(t, err)
		return func(string) (bool, string) {
			after, err := os.Hostname()
			require.NoError(t, err)
			if after != before {
				return false, "the host's name is now " + after
			}
			return true, ""
		}
	}
}

// processesWith lists the host's processes whose command line starts with s (argv[0]:
// the shells that ran the attempt hold s further on).
func processesWith(s string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(b), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func installed(prog string) bool {
	_, err := exec.LookPath(prog)
	return err == nil
}
