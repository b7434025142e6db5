//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func init() {
	childScenarios["signals"] = signalsChild
	childScenarios["go-kill"] = goKillChild
}

// goKillChild, started under the filter, starts a process with os/exec and kills it
// with os.Process.Kill: Go must find pidfd_send_signal missing and fall back to kill(2).
func goKillChild() int {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		report("go_kill", err)
		return 1
	}
	report("go_kill", errResult(cmd.Process.Kill()))
	_ = cmd.Wait()
	return 0
}

// protectedEnv passes the pid of the process the signals scenario must not reach.
const protectedEnv = "SANDBOX_TEST_PROTECTED"

// signalsChild applies the filter guarding the process of protectedEnv (and its group)
// and the child's own ancestors, then sends SIGKILL to the protected process by every
// call that can, and signal 0 (a permission check that delivers nothing) to its parent,
// the test.
func signalsChild() int {
	target, err := strconv.Atoi(os.Getenv(protectedEnv))
	if err != nil {
		report("apply", err)
		return 1
	}
	guard, err := AncestorSignals()
	if err != nil {
		report("apply", err)
		return 1
	}
	guard.Pids = append(guard.Pids, target)
	guard.Groups = append(guard.Groups, target) // it leads its own group
	// A child of its own, which it may signal still.
	own := exec.Command("sleep", "60")
	if err := own.Start(); err != nil {
		report("apply", err)
		return 1
	}
	if _, err := ApplySeccomp(Sockets{}, guard); err != nil {
		report("apply", err)
		return 1
	}
	report("apply", "ok")
	sys := reportSyscall
	kill := uintptr(unix.SIGKILL)
	var info unix.Siginfo
	sys("kill", unix.SYS_KILL, uintptr(target), kill)
	sys("kill_group", unix.SYS_KILL, uintptr(-target), kill)
	sys("kill_group_high_bits", unix.SYS_KILL, uintptr(uint64(0x1_0000_0000)|uint64(uint32(-target))), kill)
	sys("tgkill", unix.SYS_TGKILL, uintptr(target), uintptr(target), kill)
	sys("tkill", unix.SYS_TKILL, uintptr(target), kill)
	sys("rt_sigqueueinfo", unix.SYS_RT_SIGQUEUEINFO, uintptr(target), kill, uintptr(unsafe.Pointer(&info)))
	sys("rt_tgsigqueueinfo", unix.SYS_RT_TGSIGQUEUEINFO, uintptr(target), uintptr(target), kill, uintptr(unsafe.Pointer(&info)))
	sys("pidfd_open", unix.SYS_PIDFD_OPEN, uintptr(target), 0)
	if dir, err := unix.Open("/proc/"+strconv.Itoa(target), unix.O_RDONLY|unix.O_DIRECTORY, 0); err == nil {
		sys("pidfd_send_signal_proc", unix.SYS_PIDFD_SEND_SIGNAL, uintptr(dir), kill, 0, 0)
		_ = unix.Close(dir)
	} else {
		report("pidfd_send_signal_proc", err)
	}
	r, w, _ := os.Pipe()
	sys("f_setown", unix.SYS_FCNTL, r.Fd(), unix.F_SETOWN, uintptr(target))
	sys("f_setown_group", unix.SYS_FCNTL, r.Fd(), unix.F_SETOWN, uintptr(-target))
	var owner [2]int32
	sys("f_setown_ex", unix.SYS_FCNTL, r.Fd(), unix.F_SETOWN_EX, uintptr(unsafe.Pointer(&owner)))
	sys("f_setown_self", unix.SYS_FCNTL, r.Fd(), unix.F_SETOWN, uintptr(os.Getpid()))
	sys("fiosetown", unix.SYS_IOCTL, w.Fd(), 0x8901, uintptr(unsafe.Pointer(&target)))
	_, _ = r.Close(), w.Close()
	sys("kill_parent", unix.SYS_KILL, uintptr(os.Getppid()), 0)
	sys("kill_every_process", unix.SYS_KILL, ^uintptr(0), 0)
	sys("kill_own_group", unix.SYS_KILL, 0, 0)
	sys("kill_own_child", unix.SYS_KILL, uintptr(own.Process.Pid), kill)
	_ = own.Wait()
	// A Go program started under the filter still kills its own children.
	goKill := exec.Command(os.Args[0], "-test.run=^$")
	goKill.Env = append(os.Environ(), childEnv+"=go-kill")
	out, err := goKill.Output()
	if err != nil {
		report("go_kill", err)
	} else {
		fmt.Print(string(out))
	}
	sys("setpgid_into_group", unix.SYS_SETPGID, 0, uintptr(target)) // last: it would succeed unguarded
	return 0
}

// TestSeccompGuardsSignals: where Signals guards a process, the filter keeps every
// signal from it (the process table shows it alive afterwards), and from the
// process's ancestors, while a process may still signal its own children and group.
func TestSeccompGuardsSignals(t *testing.T) {
	target := exec.Command("sleep", "60")
	target.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, target.Start())
	exited := make(chan struct{})
	go func() {
		_ = target.Wait() // the process table below says how it ended
		close(exited)
	}()
	defer func() {
		_ = target.Process.Kill()
		<-exited
	}()
	got := runChild(t, "signals", protectedEnv+"="+strconv.Itoa(target.Process.Pid))
	require.Equal(t, "ok", got["apply"])
	for key, want := range map[string]string{
		"kill": "EPERM", "kill_group": "EPERM", "kill_group_high_bits": "EPERM", "tgkill": "EPERM",
		"tkill": "EPERM", "rt_sigqueueinfo": "EPERM", "rt_tgsigqueueinfo": "EPERM", "pidfd_open": "EPERM",
		"pidfd_send_signal_proc": "ENOSYS",
		"f_setown":               "EPERM", "f_setown_group": "EPERM", "f_setown_ex": "EPERM", "fiosetown": "EPERM",
		"kill_parent": "EPERM", "kill_every_process": "EPERM", "setpgid_into_group": "EPERM",
		"f_setown_self": "ok", "kill_own_group": "ok", "kill_own_child": "ok", "go_kill": "ok",
	} {
		assert.Equal(t, want, got[key], key)
	}
	select {
	case <-exited:
		t.Fatal("ESCAPE: the guarded process was killed")
	default:
	}
	assert.NoError(t, target.Process.Signal(syscall.Signal(0)), "the guarded process is gone")
}

// TestAncestorSignals: the guarded processes are this one's parent up to pid 1, with
// their groups.
func TestAncestorSignals(t *testing.T) {
	s, err := AncestorSignals()
	require.NoError(t, err)
	require.NotEmpty(t, s.Pids)
	assert.Equal(t, os.Getppid(), s.Pids[0])
	assert.Equal(t, 1, s.Pids[len(s.Pids)-1])
	assert.NotContains(t, s.Pids, os.Getpid())
	pgrp, err := unix.Getpgid(os.Getppid())
	require.NoError(t, err)
	assert.Contains(t, s.Groups, pgrp)
}

// TestParseStat reads the parent and group of stat lines, a command name with spaces
// and parentheses among them, and refuses what is not one.
func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, line  string
		ppid, pgrp  int
		wantFailure bool
	}{
		{name: "plain", line: "4242 (agentrun) S 17 4242 17 0 -1 4194560", ppid: 17, pgrp: 4242},
		{name: "a name with spaces and parentheses", line: "99 (a) S 1 2 (b)) R 7 8 9 0", ppid: 7, pgrp: 8},
		{name: "no name", line: "99 S 1 2", wantFailure: true},
		{name: "too short", line: "99 (x) S 1", wantFailure: true},
		{name: "not numbers", line: "99 (x) S one two", wantFailure: true},
		{name: "negative", line: "99 (x) S -1 2", wantFailure: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ppid, pgrp, err := parseStat([]byte(tc.line))
			if tc.wantFailure {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []int{tc.ppid, tc.pgrp}, []int{ppid, pgrp})
		})
	}
}

// FuzzParseStat: on any text parseStat returns two numbers that stand in the text after
// its last ')', or an error; it never panics.
func FuzzParseStat(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		ppid, pgrp, err := parseStat([]byte(text))
		if err != nil {
			return
		}
		rest := text[strings.LastIndexByte(text, ')')+1:]
		assert.Contains(t, rest, strconv.Itoa(ppid))
		assert.Contains(t, rest, strconv.Itoa(pgrp))
		assert.GreaterOrEqual(t, min(ppid, pgrp), 0)
	})
}
