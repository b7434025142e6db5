package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// deviceFiles may be read and written (and their terminals controlled) at every level.
var deviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// ApplyLandlockThread restricts the calling thread, and what it starts, to the
// filesystem of s: read and execute where s binds, write where s binds writable,
// nothing elsewhere. inRoot says the thread already lives in the root EnterRoot made
// (level strict), so paths are the sandbox's own; otherwise (level landlock) the rules
// are on host paths, with the hidden paths carved out and, for the network, TCP connect
// allowed only to proxyPort (0: no TCP at all, which seccomp closes on every ABI; before
// ABI 4 Landlock has no network rules, and a proxyPort is an error). From ABI 6 the
// domain is scoped too: no signal to a process outside it, and no abstract unix socket
// of one. The thread must be locked to its goroutine for good and have no_new_privs
// set, and it is to exec next (the worker's stage 1 becoming stage 2), so that the
// whole process is then the one domain: its threads and the processes they start can
// signal one another. exe is a file (opened with O_PATH) the thread may still read and
// execute although no path of the rules leads to it: the worker's own binary. It
// returns the ABI in force.
func ApplyLandlockThread(s Spec, inRoot bool, hidden []string, proxyPort int, exe *os.File) (int, error) {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0, fmt.Errorf("landlock: not available: %w", err)
	}
	if abi < 1 {
		return 0, fmt.Errorf("landlock: not available: ABI version %d", abi)
	}
	cfg := landlock.V7 // BestEffort drops what an older ABI lacks, the scopes below 6
	rules := landlockRules(s, inRoot, hidden)
	if inRoot {
		cfg.HandledAccessNet = 0 // the empty network namespace is the network layer
	} else if proxyPort > 0 {
		if abi < LandlockNetABI {
			return 0, fmt.Errorf("landlock: %w", landlockNetError(abi))
		}
		rules = append(rules, landlock.ConnectTCP(uint16(proxyPort)))
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return 0, fmt.Errorf("landlock: %w", err)
	}
	if fd < 0 {
		return 0, fmt.Errorf("landlock: nothing to enforce")
	}
	defer func() { _ = unix.Close(fd) }()
	attr := llsys.PathBeneathAttr{AllowedAccess: uint64(llsys.AccessFSExecute | llsys.AccessFSReadFile), ParentFd: int(exe.Fd())}
	if err := llsys.LandlockAddPathBeneathRule(fd, &attr, 0); err != nil {
		return 0, fmt.Errorf("landlock: the worker binary: %w", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return 0, fmt.Errorf("landlock: %w", err)
	}
	return abi, nil
}

func landlockRules(s Spec, inRoot bool, hidden []string) []landlock.Rule {
	var rules []landlock.Rule
	devRule := landlock.RWFiles(deviceFiles...).WithIoctlDev().IgnoreIfMissing()
	if inRoot {
		rules = append(rules, landlock.RODirs("/"), devRule,
			landlock.RWDirs("/tmp", "/dev/shm").IgnoreIfMissing(),
			landlock.RWDirs("/dev/pts").WithIoctlDev().IgnoreIfMissing())
		for _, b := range s.Binds() {
			if !b.Write {
				continue
			}
			// A writable file (such as /.dockerenv of an external scope) takes the
			// rights of a file only: the kernel refuses a folder's on it.
			if fi, err := os.Stat(b.Path); err == nil && !fi.IsDir() {
				rules = append(rules, landlock.PathAccess(landlock.V7.HandledAccessFS&fileAccess, b.Path).IgnoreIfMissing())
				continue
			}
			rules = append(rules, landlock.RWDirs(b.Path).WithRefer().IgnoreIfMissing())
		}
		return rules
	}
	rules = append(rules, devRule, landlock.RODirs("/proc", "/dev").IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts").WithIoctlDev().IgnoreIfMissing())
	if s.TempDir != "" {
		rules = append(rules, landlock.RWDirs(s.TempDir).WithRefer())
	}
	for _, b := range s.Binds() {
		var dirs, files []string
		carve(b.Path, hidden, func(p string, dir bool) {
			if dir {
				dirs = append(dirs, p)
			} else {
				files = append(files, p)
			}
		})
		read := llsys.AccessFSReadFile | llsys.AccessFSReadDir
		if b.Exec {
			read |= llsys.AccessFSExecute
		}
		access := landlock.AccessFSSet(read)
		if b.Write {
			access = landlock.V7.HandledAccessFS
		}
		if len(dirs) > 0 {
			rules = append(rules, landlock.PathAccess(access, dirs...).IgnoreIfMissing())
		}
		if len(files) > 0 {
			rules = append(rules, landlock.PathAccess(access&fileAccess, files...).IgnoreIfMissing())
		}
	}
	return rules
}

// fileAccess are the rights that apply to a file (not a directory).
const fileAccess = landlock.AccessFSSet(llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSReadFile |
	llsys.AccessFSTruncate | llsys.AccessFSIoctlDev)

// carve calls allow with path, or, when a hidden path that exists lies below it, with
// each of its entries instead, recursively, so that the hidden paths get no rule of
// their own or of an ancestor: Landlock grants by hierarchy and cannot subtract. The
// folders on the way get no rule themselves, so the tools can neither list them nor
// make anything in them (the runner refuses that where they should write, see
// Spec.HiddenInWritable); a hidden path that does not exist takes nothing from them.
// Symbolic links get no rule (a rule would follow them); their targets are judged on
// their own.
func carve(path string, hidden []string, allow func(p string, dir bool)) {
	if slices.Contains(hidden, path) {
		return
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 {
		return
	}
	if _, below := existingBelow(path, hidden); !below || !fi.IsDir() {
		allow(path, fi.IsDir())
		return
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return // an unreadable directory: no rule, so nothing below it is reachable
	}
	for _, e := range entries {
		carve(filepath.Join(path, e.Name()), hidden, allow)
	}
}
