package sandbox

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// nprocUID is a host uid no account uses, for the RLIMIT_NPROC scenarios.
const nprocUID = 60999

// nprocLimit is the RLIMIT_NPROC the scenarios set.
const nprocLimit = 20

// forkPython forks up to 200 children that wait on a pipe and prints how many it got.
const forkPython = `import os
r, w = os.pipe()
pids = []
for i in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    pids.append(pid)
print(len(pids))
os.close(w)
for p in pids:
    os.waitpid(p, 0)
`

// systemPython is a python3 every uid may run (not one under /root), "" if none.
func systemPython() string {
	for _, p := range []string{"/usr/bin/python3", "/bin/python3", "/usr/local/bin/python3"} {
		if st, err := os.Stat(p); err == nil && st.Mode().Perm()&0o001 != 0 {
			return p
		}
	}
	return ""
}

func init() {
	childScenarios["rlimit-fsize"] = func() int {
		dir := os.Getenv("SANDBOX_TEST_DIR")
		if err := (Limits{FileSize: 1 << 20}).Apply(); err != nil {
			report("apply", err)
			return 1
		}
		report("apply", "ok")
		// Go ignores SIGXFSZ, so the write itself fails with EFBIG.
		f, err := os.Create(filepath.Join(dir, "go"))
		if err != nil {
			report("create", err)
			return 1
		}
		_, err = f.Write(make([]byte, 2<<20))
		_ = f.Close()
		report("go_write_efbig", errors.Is(err, syscall.EFBIG))
		// A child gets the default disposition back and dies of SIGXFSZ.
		out, err := os.Create(filepath.Join(dir, "head"))
		if err != nil {
			report("create", err)
			return 1
		}
		cmd := exec.Command("head", "-c", "2097152", "/dev/zero")
		cmd.Stdout = out
		err = cmd.Run()
		_ = out.Close()
		var exit *exec.ExitError
		report("child_signal", errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGXFSZ)
		st, _ := os.Stat(filepath.Join(dir, "head"))
		report("child_size", st.Size())
		return 0
	}
	childScenarios["rlimit-nofile"] = func() int {
		if err := (Limits{OpenFiles: 64}).Apply(); err != nil {
			report("apply", err)
			return 1
		}
		var lim unix.Rlimit
		_ = unix.Getrlimit(unix.RLIMIT_NOFILE, &lim)
		report("soft", lim.Cur)
		report("hard", lim.Max)
		report("go_emfile", emfileWithin(100))
		report("child_limits", bashOutput("ulimit -n; ulimit -Hn"))
		return 0
	}
	childScenarios["rlimit-below-hard"] = func() int {
		// The runner's own hard limits are lower than the sandbox's: a container's
		// --ulimit, a service's LimitNOFILE. Lowering a hard limit needs no privilege.
		for _, r := range []struct {
			resource int
			v        uint64
		}{{syscall.RLIMIT_NOFILE, 100}, {syscall.RLIMIT_FSIZE, 1 << 20}} {
			if err := syscall.Setrlimit(r.resource, &syscall.Rlimit{Cur: r.v, Max: r.v}); err != nil {
				report("lower", err)
				return 1
			}
		}
		if err := DefaultLimits.Apply(); err != nil {
			report("apply", err)
			return 1
		}
		report("apply", "ok")
		report("go_emfile", emfileWithin(200))
		report("child_limits", bashOutput("ulimit -n; ulimit -Hn; ulimit -Hf"))
		return 0
	}
	childScenarios["rlimit-as"] = func() int {
		py := systemPython()
		if err := (Limits{AddressSpace: 1 << 30}).Apply(); err != nil {
			report("apply", err)
			return 1
		}
		// Exec at once: the Go runtime itself must not meet the limit.
		err := syscall.Exec(py, []string{"python3", "-c",
			"try:\n    bytearray(2 << 30)\n    print('alloc=ok')\nexcept MemoryError:\n    print('alloc=MemoryError')"}, os.Environ())
		report("exec", err)
		return 1
	}
	childScenarios["rlimit-nproc"] = func() int {
		// Tasks of the same host uid outside the namespace, started before the limit.
		outside, _ := strconv.Atoi(os.Getenv("SANDBOX_TEST_OUTSIDE"))
		var sleepers []*exec.Cmd
		defer func() {
			for _, c := range sleepers {
				_ = c.Process.Kill()
				_ = c.Wait()
			}
		}()
		for range outside {
			c := exec.Command("sleep", "600")
			c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nprocUID, Gid: nprocUID}}
			if err := c.Start(); err != nil {
				report("outside", err)
				return 1
			}
			sleepers = append(sleepers, c)
		}
		if err := (Limits{Processes: nprocLimit}).Apply(); err != nil {
			report("apply", err)
			return 1
		}
		host, _ := strconv.Atoi(os.Getenv("SANDBOX_TEST_HOST_UID"))
		cmd := exec.Command(systemPython(), "-c", forkPython)
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags: syscall.CLONE_NEWUSER,
			// setuid(0) inside the namespace: only then is the task's host uid the
			// mapped one; until then it keeps the creator's (root, exempt).
			Credential:  &syscall.Credential{Uid: 0, Gid: 0},
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: host, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: host, Size: 1}},
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			report("python", strings.TrimSpace(err.Error()+": "+stderr.String()))
			return 1
		}
		report("forked", strings.TrimSpace(string(out)))
		return 0
	}
}

// emfileWithin says whether opening n files fails with EMFILE on the way; it closes
// what it opened.
func emfileWithin(n int) bool {
	var files []*os.File
	var err error
	for range n {
		var f *os.File
		if f, err = os.Open(os.DevNull); err != nil {
			break
		}
		files = append(files, f)
	}
	for _, f := range files {
		_ = f.Close()
	}
	return errors.Is(err, syscall.EMFILE)
}

// bashOutput is what a child bash prints for script, its words joined by commas (bash:
// sh's ulimit differs from one shell to another).
func bashOutput(script string) string {
	out, _ := exec.Command("bash", "-c", script).Output()
	return strings.Join(strings.Fields(string(out)), ",")
}

func TestLimitsFileSize(t *testing.T) {
	got := runChild(t, "rlimit-fsize", "SANDBOX_TEST_DIR="+t.TempDir())
	require.Equal(t, "ok", got["apply"])
	assert.Equal(t, "true", got["go_write_efbig"], "write past RLIMIT_FSIZE in Go")
	assert.Equal(t, "true", got["child_signal"], "a child writing past RLIMIT_FSIZE dies of SIGXFSZ")
	assert.Equal(t, strconv.Itoa(1<<20), got["child_size"])
}

func TestLimitsOpenFiles(t *testing.T) {
	got := runChild(t, "rlimit-nofile")
	assert.Equal(t, "64", got["soft"])
	assert.Equal(t, "64", got["hard"])
	assert.Equal(t, "true", got["go_emfile"])
	assert.Equal(t, "64,64", got["child_limits"], "os/exec must not restore the start-up soft limit")
}

// TestLimitsBelowTheHardLimit applies DefaultLimits in a process whose hard limits are
// already lower, as a runner in a container with a low --ulimit is: they stay as low as
// they were (a limit is never raised), and the worker still starts.
func TestLimitsBelowTheHardLimit(t *testing.T) {
	got := runChild(t, "rlimit-below-hard")
	require.Equal(t, "ok", got["apply"])
	assert.Equal(t, "true", got["go_emfile"], "a 200th open file past the limit of 100")
	// bash's ulimit -f counts blocks of 1024 bytes.
	assert.Equal(t, "100,100,1024", got["child_limits"])
}

func TestLimitsAddressSpace(t *testing.T) {
	if systemPython() == "" {
		t.Skip("no system python3")
	}
	got := runChild(t, "rlimit-as")
	assert.Equal(t, "MemoryError", got["alloc"])
}

// TestLimitsProcesses checks RLIMIT_NPROC inside a user namespace, as the strict level
// runs tools: a fork bomb stops at the limit, tasks of the same host uid outside the
// namespace do not count (per-namespace ucounts, Linux 5.14+), and, as the kernel
// exempts global root, mapping the namespace's root to host root escapes the limit.
func TestLimitsProcesses(t *testing.T) {
	if systemPython() == "" {
		t.Skip("no system python3")
	}
	if os.Getuid() != 0 {
		t.Skip("mapping a namespace to another host uid needs root")
	}
	for _, tc := range []struct {
		name             string
		hostUID, outside int
		check            func(t *testing.T, forked int)
	}{
		{"fork bomb stops at the limit", nprocUID, 0, func(t *testing.T, n int) {
			assert.Positive(t, n)
			assert.Less(t, n, nprocLimit)
		}},
		{"the host uid's tasks outside the namespace do not count", nprocUID, nprocLimit + 5, func(t *testing.T, n int) {
			assert.Positive(t, n)
			assert.Less(t, n, nprocLimit)
		}},
		{"root mapped to host root is exempt", 0, 0, func(t *testing.T, n int) {
			assert.Equal(t, 200, n)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := runChild(t, "rlimit-nproc",
				"SANDBOX_TEST_HOST_UID="+strconv.Itoa(tc.hostUID), "SANDBOX_TEST_OUTSIDE="+strconv.Itoa(tc.outside))
			n, err := strconv.Atoi(got["forked"])
			require.NoError(t, err, "child reported %v", got)
			tc.check(t, n)
		})
	}
}
