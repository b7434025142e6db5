package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentrun/agentrun/pathname"
	"golang.org/x/sys/unix"
)

// Paths inside the sandbox.
const (
	// Hostname is the sandbox's host name.
	Hostname = "agentrun-sandbox"
)

// SysProcAttr returns the attributes that start the worker in the namespaces of level
// strict: user (the caller's uid and gid mapped to 0), mount, pid, ipc, uts and net.
// Other levels start it in the caller's namespaces. At every level the worker leads a
// session of its own, which has no controlling terminal: the tools cannot open the
// terminal agentrun runs in (/dev/tty), to write to the user's screen or read what
// the user types, nor join a process group of agentrun's session.
func SysProcAttr(l Level) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if l != LevelStrict {
		return a
	}
	a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
		syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWNET
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	a.GidMappingsEnableSetgroups = false
	return a
}

// EnterRoot builds the sandbox's filesystem and makes it the root of the calling
// process, which must be pid 1 of the namespaces SysProcAttr(LevelStrict) makes: the
// binds of s read-only or writable as its mode says, the hidden paths masked, a private
// /tmp, a fresh /proc of the pid namespace, a minimal /dev, and the proxy socket.
func EnterRoot(s Spec, hidden []string) error {
	if err := enterRoot(s, hidden); err != nil {
		return fmt.Errorf("sandbox root: %w", err)
	}
	return nil
}

func enterRoot(s Spec, hidden []string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	// bubblewrap's sequence: a tmpfs on /tmp becomes the root, the host's root stays
	// reachable below it as /oldroot, and the new root is assembled in /newroot.
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mount base tmpfs: %w", err)
	}
	for _, d := range []string{"/tmp/oldroot", "/tmp/newroot"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.PivotRoot("/tmp", "/tmp/oldroot"); err != nil {
		return fmt.Errorf("pivot to base: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", "/newroot", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mount root tmpfs: %w", err)
	}
	// The host's mount points, read once: a recursive bind brings the ones below its
	// source along, and each must be made read-only in its own right.
	host, err := mountsUnder("/oldroot/proc/self/mountinfo", "/oldroot")
	if err != nil {
		return fmt.Errorf("read mounts: %w", err)
	}
	// /dev and the scratch folders first, so that binds below them (a workspace on
	// /dev/shm) land on top instead of being hidden.
	if err := mountScratch(s); err != nil {
		return err
	}
	if err := makeDev(); err != nil {
		return err
	}
	if err := makeScratch(s); err != nil {
		return err
	}
	for _, b := range s.Binds() {
		if err := bind(b, host); err != nil {
			return err
		}
	}
	h := hider{root: "/newroot", stage: "/", devNull: "/oldroot/dev/null", mountinfo: "/oldroot/proc/self/mountinfo"}
	if err := h.hide(s.Binds(), hidden); err != nil {
		return err
	}
	// A fresh proc of the pid namespace; the kernel allows it only while the host's
	// fully visible /proc is still attached.
	if err := unix.Mount("proc", "/newroot/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := unix.Chdir("/newroot"); err != nil {
		return err
	}
	// pivot_root(".", ".") stacks the old root on the new one; detaching it leaves
	// nothing of the host but what was bound.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot to new root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("make root read-only: %w", err)
	}
	if err := unix.Sethostname([]byte(Hostname)); err != nil {
		return fmt.Errorf("hostname: %w", err)
	}
	return nil
}

// bind makes host path b.Path visible at the same path in the new root; host lists the
// host's mount points (below /oldroot).
func bind(b Bind, host []string) error {
	src := "/oldroot" + b.Path
	fi, err := os.Lstat(src)
	if err != nil {
		if b.Optional && errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("bind %s: %w", b.Path, err)
	}
	dst := "/newroot" + b.Path
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if _, err := os.Lstat(dst); err == nil {
			return nil
		}
		return os.Symlink(target, dst)
	}
	if err := mountPoint(dst, fi.IsDir()); err != nil {
		return fmt.Errorf("bind %s: %w", b.Path, err)
	}
	if b.Upper != "" && fi.IsDir() {
		return layer(b, src, dst, "/oldroot"+b.Upper)
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", b.Path, err)
	}
	flags := uintptr(unix.MS_NOSUID | unix.MS_NODEV)
	if !b.Write {
		flags |= unix.MS_RDONLY
	}
	if !b.Exec {
		flags |= unix.MS_NOEXEC
	}
	points := []string{dst}
	for _, m := range host {
		if rest, ok := strings.CutPrefix(m, src+"/"); ok {
			points = append(points, dst+"/"+rest)
		}
	}
	return remount(points, flags)
}

// remount applies flags to the mounts at points (parents first), keeping the flags the
// kernel locks in a user namespace.
func remount(points []string, flags uintptr) error {
	for _, p := range points {
		var st unix.Statfs_t
		if err := unix.Statfs(p, &st); err != nil {
			continue // a mount point this process cannot reach (an unreadable directory)
		}
		keep := uintptr(0)
		for _, f := range [][2]uintptr{{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV},
			{unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_NOATIME, unix.MS_NOATIME},
			{unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME}, {unix.ST_RDONLY, unix.MS_RDONLY}} {
			if uintptr(st.Flags)&f[0] != 0 {
				keep |= f[1]
			}
		}
		if err := unix.Mount("", p, "", unix.MS_REMOUNT|unix.MS_BIND|flags|keep, ""); err != nil {
			return fmt.Errorf("remount %s: %w", strings.TrimPrefix(p, "/newroot"), err)
		}
	}
	return nil
}

// mountsUnder lists the mount points at or below dir, parents first, from mountinfo
// (this process's: during the setup the host's /proc is below /oldroot).
func mountsUnder(mountinfo, dir string) ([]string, error) {
	f, err := os.Open(mountinfo)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMount(fields[4])
		if pathname.Within(dir, p) {
			out = append(out, p)
		}
	}
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes of space, tab, newline and backslash.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			n := 0
			ok := true
			for _, c := range s[i+1 : i+4] {
				if c < '0' || c > '7' {
					ok = false
					break
				}
				n = n*8 + int(c-'0')
			}
			if ok {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountPoint makes dst exist as a directory or an empty file.
func mountPoint(dst string, dir bool) error {
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	if dir {
		return os.MkdirAll(dst, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// scratchArea is where the scratch space is mounted in the setup's own root, which the
// sandbox never sees: its folders are bound into the new root.
const scratchArea = "/scratch"

// mountScratch mounts the sandbox's scratch space, one tmpfs of s.ScratchSize bytes,
// with a folder for each place it is bound to: tmp, shm and home. One size holds for
// the three together.
func mountScratch(s Spec) error {
	size, err := s.ScratchSize()
	if err != nil {
		return err
	}
	if err := os.Mkdir(scratchArea, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", scratchArea, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("mode=0755,size=%d", size)); err != nil {
		return fmt.Errorf("mount scratch: %w", err)
	}
	for name, mode := range map[string]os.FileMode{"tmp": 0o1777, "shm": 0o1777, "home": 0o755} {
		d := filepath.Join(scratchArea, name)
		if err := os.Mkdir(d, 0); err != nil {
			return err
		}
		if err := os.Chmod(d, mode); err != nil { // Mkdir's mode passes the umask
			return err
		}
	}
	return nil
}

// MachineScratch is DefaultScratch of this machine's memory: the scratch size of a
// session whose spec gives none.
func MachineScratch() (uint64, error) {
	memory, err := MachineMemory()
	if err != nil {
		return 0, fmt.Errorf("scratch: %w", err)
	}
	return DefaultScratch(memory), nil
}

// MachineMemory is this machine's memory in bytes.
func MachineMemory() (uint64, error) {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0, err
	}
	return uint64(si.Totalram) * uint64(si.Unit), nil
}

// bindScratch binds folder name of the scratch space at dst of the new root.
func bindScratch(name, dst string) error {
	if err := unix.Mount(filepath.Join(scratchArea, name), dst, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mount %s: %w", strings.TrimPrefix(dst, "/newroot"), err)
	}
	return nil
}

// makeScratch gives the sandbox a private /tmp and /run, and the home directory when it
// is not bound, from the scratch space.
func makeScratch(s Spec) error {
	for _, d := range []string{"/newroot/tmp", "/newroot/run/agentrun", "/newroot/proc"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := bindScratch("tmp", "/newroot/tmp"); err != nil {
		return err
	}
	if s.Home != "" {
		if _, err := os.Stat("/newroot" + s.Home); err != nil {
			if err := os.MkdirAll("/newroot"+s.Home, 0o755); err != nil {
				return err
			}
		}
		if !s.Mode.External.Has(PermRead) {
			if err := bindScratch("home", "/newroot"+s.Home); err != nil {
				return err
			}
		}
	}
	return nil
}

// devices are bound from the host into the minimal /dev.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

func makeDev() error {
	if err := os.MkdirAll("/newroot/dev", 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", "/newroot/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, d := range devices {
		if err := bindFile("/oldroot/dev/"+d, "/newroot/dev/"+d); err != nil && d != "tty" {
			return fmt.Errorf("/dev/%s: %w", d, err)
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx"} {
		if err := os.Symlink(target, "/newroot/dev/"+name); err != nil {
			return err
		}
	}
	for _, d := range []string{"/newroot/dev/shm", "/newroot/dev/pts"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := bindScratch("shm", "/newroot/dev/shm"); err != nil {
		return err
	}
	// A private pseudo-terminal instance, for tools that want a terminal; optional.
	_ = unix.Mount("devpts", "/newroot/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
	return nil
}

// bindFile binds one host file at dst.
func bindFile(src, dst string) error {
	if err := mountPoint(dst, false); err != nil {
		return err
	}
	return unix.Mount(src, dst, "", unix.MS_BIND, "")
}
