// Package testbuild builds the executables that tests run, when a test first asks for
// them, into a folder of the user's cache that is kept between runs for each package
// folder, so that the go command relinks them only when their code has changed; the
// folders of checkouts that are gone, or unused for 30 days, are removed; and it writes
// those a test makes itself (WriteExecutable) so that running them never meets
// "text file busy".
package testbuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Cmd is one go command that writes an executable.
type Cmd struct {
	// File is the name of the executable in the Set's folder; the command gets "-o"
	// and its path right after the subcommand.
	File string
	// Args follow "go": the subcommand ("build", or "test" and "-c"), its flags and the
	// package.
	Args []string
	// Env is added to the go command's environment (CGO_ENABLED=0).
	Env []string
}

// Set is executables built together into one folder, once per test binary.
type Set struct {
	name string
	cmds []Cmd
	once sync.Once
	dir  string
	err  error
}

// New returns the set name of the executables cmds write. Sets of one package must have
// different names.
func New(name string, cmds ...Cmd) *Set {
	return &Set{name: name, cmds: cmds}
}

// Dir returns the folder of the set's executables. The first call in a test binary runs
// the go commands (which leave an executable that is up to date as it is); when one
// fails, Dir fails tb, on this call and on every later one.
func (s *Set) Dir(tb testing.TB) string {
	tb.Helper()
	s.once.Do(func() { s.dir, s.err = s.build(rootDir()) })
	if s.err != nil {
		tb.Fatal(s.err)
	}
	return s.dir
}

// Path returns the path of the set's executable file, built as Dir builds it.
func (s *Set) Path(tb testing.TB, file string) string {
	tb.Helper()
	return filepath.Join(s.Dir(tb), file)
}

// build runs the commands at once, in the set's folder below root for the working
// folder, the test's package. Other test processes of the package (two runs, or a test's
// child) wait on the folder's lock rather than write the same files.
func (s *Set) build(root string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("testbuild %s: %w", s.name, err)
	}
	k := key(wd)
	dir := filepath.Join(root, k, s.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testbuild %s: %w", s.name, err)
	}
	if err := mark(filepath.Join(root, k), wd); err != nil {
		return "", fmt.Errorf("testbuild %s: %w", s.name, err)
	}
	pruneOnce.Do(func() { prune(root, k, time.Now()) })
	unlock, err := lock(filepath.Join(dir, ".lock"))
	if err != nil {
		return "", fmt.Errorf("testbuild %s: %w", s.name, err)
	}
	defer unlock()
	cmds := make([]*exec.Cmd, len(s.cmds))
	for i, c := range s.cmds {
		args := append([]string{c.Args[0], "-o", filepath.Join(dir, c.File)}, c.Args[1:]...)
		cmds[i] = exec.Command("go", args...)
		cmds[i].Dir = wd
		if c.Env != nil {
			cmds[i].Env = append(os.Environ(), c.Env...)
		}
	}
	if err := run(cmds); err != nil {
		return "", fmt.Errorf("testbuild %s: %w", s.name, err)
	}
	return dir, nil
}

// rootDir is the folder that holds every package's sets: agentrun-tests in the user's
// cache folder, or in the temporary folder when there is none.
func rootDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "agentrun-tests")
}

// key names a package folder's sets by its path: its last element, for whoever lists
// rootDir, and a digest of the whole, so that two checkouts never share a file.
func key(wd string) string {
	sum := sha256.Sum256([]byte(wd))
	return filepath.Base(wd) + "-" + hex.EncodeToString(sum[:6])
}

// checkoutFile, in a package folder's sets, names the package folder they were built for.
const checkoutFile = ".checkout"

// staleAfter is how long the sets of a checkout that still exists are kept unused.
const staleAfter = 30 * 24 * time.Hour

var pruneOnce sync.Once

// mark records in keyDir that wd's tests use its sets now.
func mark(keyDir, wd string) error {
	if err := os.WriteFile(filepath.Join(keyDir, checkoutFile), []byte(wd), 0o644); err != nil {
		return err
	}
	now := time.Now()
	return os.Chtimes(keyDir, now, now)
}

// prune removes, below root, the sets of package folders other than keep's that are
// gone (a clean clone deleted after its run) or unused for staleAfter, unless a test
// process holds one of their locks. It is best effort: what it cannot remove stays.
func prune(root, keep string, now time.Time) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		keyDir := filepath.Join(root, e.Name())
		if e.Name() == keep || !e.IsDir() || !stale(keyDir, now) {
			continue
		}
		if unlock, ok := lockAll(keyDir); ok {
			_ = os.RemoveAll(keyDir)
			unlock()
		}
	}
}

// stale says whether the sets in keyDir are no longer needed: their checkout is gone,
// or they have not been used for staleAfter.
func stale(keyDir string, now time.Time) bool {
	if wd, err := os.ReadFile(filepath.Join(keyDir, checkoutFile)); err == nil {
		if _, err := os.Stat(string(wd)); errors.Is(err, os.ErrNotExist) {
			return true
		}
	}
	fi, err := os.Stat(keyDir)
	return err == nil && now.Sub(fi.ModTime()) > staleAfter
}

// lockAll takes, without waiting, the lock of every set in keyDir; ok is false when a
// test process holds one.
func lockAll(keyDir string) (unlock func(), ok bool) {
	sets, _ := filepath.Glob(filepath.Join(keyDir, "*", ".lock"))
	var held []*os.File
	unlock = func() {
		for _, f := range held {
			_ = f.Close()
		}
	}
	for _, path := range sets {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			unlock()
			return nil, false
		}
		held = append(held, f)
	}
	return unlock, true
}

// lock takes an exclusive lock of the file at path, creating it, and returns its release.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { _ = f.Close() }, nil // closing the file releases the lock
}

// run runs the commands at once and returns the first failure with its output.
func run(cmds []*exec.Cmd) error {
	outs := make([]bytes.Buffer, len(cmds))
	errs := make([]error, len(cmds))
	for i, c := range cmds {
		c.Stdout, c.Stderr = &outs[i], &outs[i]
		errs[i] = c.Start()
	}
	for i, c := range cmds {
		if errs[i] == nil {
			errs[i] = c.Wait()
		}
	}
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: %w\n%s", strings.Join(cmds[i].Args, " "), err, outs[i].String())
		}
	}
	return nil
}

// WriteExecutable writes an executable file that the test then runs. It holds
// syscall.ForkLock for reading while the file is open, as the os package does for the
// descriptors it opens, so that no child forked meanwhile by another test of the binary
// holds the file open for writing until it execs: then the run fails with "text file
// busy" (ETXTBSY), as it did for parallel tests that start processes.
func WriteExecutable(tb testing.TB, path string, content []byte) {
	tb.Helper()
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, content, 0o755)
	syscall.ForkLock.RUnlock()
	if err != nil {
		tb.Fatal(err)
	}
}
