//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func init() {
	childScenarios["seccomp"] = seccompChild
	childScenarios["seccomp-all"] = everyDenialChild
}

// execResult runs a command and says "ok", or how it failed with its stderr's last line.
func execResult(name string, args ...string) string {
	cmd := exec.Command(name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		return fmt.Sprintf("failed: %v: %s", err, lines[len(lines)-1])
	}
	return "ok"
}

// seccompChild applies the filter and reports how the denied calls, and a few allowed
// ones, fare afterwards, in this process, in a thread made later and in children.
func seccompChild() int {
	if _, err := ApplySeccomp(Sockets{}, Signals{}); err != nil {
		report("apply", err)
		return 1
	}
	report("apply", "ok")
	sys := reportSyscall
	runtime.LockOSThread() // PTRACE_TRACEME et al. act on this thread only
	sys("ptrace", unix.SYS_PTRACE, unix.PTRACE_TRACEME)
	runtime.UnlockOSThread()
	target, _ := unix.BytePtrFromString("/nonexistent-sandbox-test")
	fstype, _ := unix.BytePtrFromString("tmpfs")
	sys("mount", unix.SYS_MOUNT, uintptr(unsafe.Pointer(fstype)), uintptr(unsafe.Pointer(target)), uintptr(unsafe.Pointer(fstype)))
	sys("umount2", unix.SYS_UMOUNT2, uintptr(unsafe.Pointer(target)))
	sys("unshare", unix.SYS_UNSHARE, unix.CLONE_NEWUSER)
	sys("keyctl", unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(0xfffffffd)) // KEY_SPEC_SESSION_KEYRING
	sys("bpf", unix.SYS_BPF, unix.BPF_MAP_CREATE)
	sys("perf_event_open", unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0))
	sys("process_vm_readv", unix.SYS_PROCESS_VM_READV, uintptr(os.Getpid()))
	sys("setns", unix.SYS_SETNS, ^uintptr(0))
	sys("userfaultfd", unix.SYS_USERFAULTFD)
	sys("clone3", unix.SYS_CLONE3)
	sys("getpid", unix.SYS_GETPID)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		report("devnull", err)
		return 1
	}
	sys("ioctl_tiocsti", unix.SYS_IOCTL, devnull.Fd(), unix.TIOCSTI)
	sys("ioctl_tiocsti_high_bits", unix.SYS_IOCTL, devnull.Fd(), 1<<32|unix.TIOCSTI)
	sys("ioctl_tcgets", unix.SYS_IOCTL, devnull.Fd(), unix.TCGETS)
	_ = devnull.Close()

	report("exec_true", execResult("true"))
	report("exec_unshare_U", execResult("unshare", "-U", "true"))
	report("exec_unshare_r", execResult("unshare", "-r", "true"))
	if py, err := exec.LookPath("python3"); err == nil {
		report("python_unshare", execResult(py, "-c", pythonUnshare))
	}
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
	report("go_clone_newuser", errResult(cmd.Run()))

	reportThreads()
	return 0
}

// reportThreads makes more locked threads than the process had when filtered, so at
// least one is new, and has each try unshare; then it checks every thread's status.
func reportThreads() {
	before := taskIDs()
	n := len(before) + 2
	var ready, done sync.WaitGroup
	release := make(chan struct{})
	results := make([]string, n)
	newThreads := make([]bool, n)
	ready.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			tid := unix.Gettid()
			_, newThreads[i] = before[tid]
			newThreads[i] = !newThreads[i]
			_, _, e := unix.Syscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
			results[i] = errnoName(e)
			ready.Done()
			<-release // hold the thread so the others need their own
		}()
	}
	ready.Wait()
	close(release)
	done.Wait()
	fresh := 0
	verdict := "EPERM"
	for i := range n {
		if newThreads[i] {
			fresh++
		}
		if results[i] != "EPERM" {
			verdict = results[i]
		}
	}
	report("new_threads", fresh > 0)
	report("threads_unshare", verdict)
	report("all_threads_seccomp", allTasks("Seccomp", "2"))
	report("all_threads_no_new_privs", allTasks("NoNewPrivs", "1"))
}

// taskIDs are the thread ids of this process.
func taskIDs() map[int]struct{} {
	ids := map[int]struct{}{}
	dirs, _ := filepath.Glob("/proc/self/task/*")
	for _, d := range dirs {
		var id int
		if _, err := fmt.Sscan(filepath.Base(d), &id); err == nil {
			ids[id] = struct{}{}
		}
	}
	return ids
}

func TestApplySeccomp(t *testing.T) {
	got := runChild(t, "seccomp")
	require.Equal(t, "ok", got["apply"])
	for _, tc := range []struct {
		name, key, want string
	}{
		{"ptrace", "ptrace", "EPERM"},
		{"mount", "mount", "EPERM"},
		{"umount2", "umount2", "EPERM"},
		{"unshare user namespace", "unshare", "EPERM"},
		{"keyctl", "keyctl", "EPERM"},
		{"bpf", "bpf", "EPERM"},
		{"perf_event_open", "perf_event_open", "EPERM"},
		{"process_vm_readv", "process_vm_readv", "EPERM"},
		{"setns", "setns", "EPERM"},
		{"userfaultfd", "userfaultfd", "EPERM"},
		{"clone3 falls back", "clone3", "ENOSYS"},
		{"getpid still works", "getpid", "ok"},
		{"ioctl TIOCSTI", "ioctl_tiocsti", "EPERM"},
		{"ioctl TIOCSTI with high bits set", "ioctl_tiocsti_high_bits", "EPERM"},
		{"other ioctls still reach the driver", "ioctl_tcgets", "ENOTTY"},
		{"a child still runs", "exec_true", "ok"},
		{"go clone with CLONE_NEWUSER", "go_clone_newuser", "EPERM"},
		{"a thread made after the filter exists", "new_threads", "true"},
		{"threads made after the filter are filtered", "threads_unshare", "EPERM"},
		{"every thread is in filter mode", "all_threads_seccomp", "yes"},
		{"every thread has no_new_privs", "all_threads_no_new_privs", "yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, got[tc.key])
		})
	}
	for _, tc := range []struct {
		name, key string
		skip      bool
	}{
		{"unshare -U in a child", "exec_unshare_U", false},
		{"unshare -r in a child", "exec_unshare_r", false},
		{"python os.unshare in a child", "python_unshare", !hasPython()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip {
				t.Skip("python3 not found")
			}
			assert.Contains(t, got[tc.key], "failed")
			assert.Contains(t, got[tc.key], "Operation not permitted")
		})
	}
}

// pythonUnshare unshares a user namespace with os.unshare (Python 3.12+) or libc.
const pythonUnshare = `import ctypes, os, sys
if hasattr(os, "unshare"):
    os.unshare(os.CLONE_NEWUSER)
    sys.exit(0)
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000) != 0:
    sys.exit(os.strerror(ctypes.get_errno()))
`

func hasPython() bool {
	_, err := exec.LookPath("python3")
	return err == nil
}

// deniedArgs are arguments that make a denied call fail harmlessly should the filter
// let it through (bad addresses, descriptors or flags); a call not listed gets zeros,
// which are harmless for it.
var deniedArgs = map[string][6]uintptr{
	"kexec_load":      {0, 0, 0, ^uintptr(0)}, // invalid flags, not "unload the image"
	"kexec_file_load": {^uintptr(0), ^uintptr(0), 0, 0, ^uintptr(0)},
	"acct":            {1}, // a bad address, not "accounting off"
	"swapoff":         {1},
	"ptrace":          {^uintptr(0)}, // no such request
}

// everyDenialChild applies the filter and reports how each call of denyList fares,
// clone aside (a raw clone would start a thread the runtime does not know; the seccomp
// scenario clones with namespace flags through os/exec).
func everyDenialChild() int {
	if _, err := ApplySeccomp(Sockets{}, Signals{}); err != nil {
		report("apply", err)
		return 1
	}
	report("apply", "ok")
	for _, d := range denyList {
		if d.flags != 0 {
			continue
		}
		a := deniedArgs[d.name]
		_, _, e := unix.Syscall6(uintptr(d.nr), a[0], a[1], a[2], a[3], a[4], a[5])
		report(d.name, errnoName(e))
	}
	return 0
}

// TestEveryDeniedCallIsRefused checks every call of denyList on the real kernel: each
// fails with its errno once the filter is in force.
func TestEveryDeniedCallIsRefused(t *testing.T) {
	got := runChild(t, "seccomp-all")
	require.Equal(t, "ok", got["apply"])
	for _, d := range denyList {
		if d.flags != 0 {
			continue
		}
		t.Run(d.name, func(t *testing.T) {
			assert.Equal(t, errnoName(d.refusal()), got[d.name])
		})
	}
}

// TestFilterJumpsStayInside walks the program as the kernel's checker does: every jump
// lands on an instruction of the program, and the last one returns.
func TestFilterJumpsStayInside(t *testing.T) {
	var families []int
	for f := range unix.AF_MAX {
		families = append(families, f)
	}
	for name, prog := range map[string][]unix.SockFilter{
		"no socket family":       filterProgram(Sockets{}, Signals{}),
		"every family":           filterProgram(Sockets{Any: families}, Signals{}),
		"every family as TCP":    filterProgram(Sockets{TCP: families}, Signals{}),
		"both":                   filterProgram(Sockets{Any: families[:10], TCP: families[10:20]}, Signals{}),
		"landlock's":             filterProgram(Sockets{TCP: families[1:3], Netlink: []int{0}, Connect: true, NoListen: true}, Signals{}),
		"every netlink protocol": filterProgram(Sockets{Any: families[:5], TCP: families[5:9], Netlink: families[:32]}, Signals{}),
		"signals guarded":        filterProgram(Sockets{TCP: families[1:3], Netlink: []int{0}, Connect: true}, Signals{Pids: families[:40], Groups: families[:40]}),
	} {
		t.Run(name, func(t *testing.T) {
			require.NotEmpty(t, prog)
			assert.Less(t, len(prog), 4096, "BPF_MAXINSNS")
			assert.Equal(t, uint16(unix.BPF_RET|unix.BPF_K), prog[len(prog)-1].Code)
			for pc, in := range prog {
				if in.Code&0x07 != unix.BPF_JMP {
					continue
				}
				assert.Less(t, pc+1+int(in.Jt), len(prog), "instruction %d: true branch", pc)
				assert.Less(t, pc+1+int(in.Jf), len(prog), "instruction %d: false branch", pc)
			}
		})
	}
}
