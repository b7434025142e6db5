package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func init() {
	childScenarios["hide"] = hideChild
	childScenarios["keep"] = keepChild
	childScenarios["mountlist"] = mountListChild
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
	if err := bindHostReadOnly(dir, d); err != nil {
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
			got := runReadyChild(t, "hide", func() {
				// As useradd replaces /etc/shadow: a new file renamed over it.
				require.NoError(t, os.WriteFile(filepath.Join(host, "new-secret"), []byte("second-secret\n"), 0o644))
				require.NoError(t, os.Rename(filepath.Join(host, "new-secret"), filepath.Join(host, "secret.txt")))
				require.NoError(t, os.WriteFile(filepath.Join(host, "late.txt"), []byte("late\n"), 0o644))
			}, "HIDE_DIR="+dir, "HIDE_HOW="+how)
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
			assert.NoFileExists(t, filepath.Join(host, "new.txt"), "the child wrote to the host folder")
		})
	}
}

// keepChild runs in the namespaces of level strict. It binds $HIDE_DIR/host read-only at
// $HIDE_DIR/new/d and $HIDE_DIR/host/own writable at new/d/own, as a session's
// workspace among the others, hides d but for own (hider.keep), says ready, and once its
// input has a line reports what it sees and writes.
func keepChild() int {
	dir := os.Getenv("HIDE_DIR")
	root := filepath.Join(dir, "new")
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	d := filepath.Join(root, "d")
	if err := bindHostReadOnly(dir, d); err != nil {
		return fail(err)
	}
	if err := unix.Mount(filepath.Join(dir, "host", "own"), filepath.Join(d, "own"), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fail(err)
	}
	h := &hider{root: root, stage: filepath.Join(dir, "stage"), devNull: "/dev/null", mountinfo: "/proc/self/mountinfo"}
	if err := h.keep("/d", bindsBelow([]Bind{{Path: "/d"}, {Path: "/d/own", Write: true}}, "/d")); err != nil {
		return fail(err)
	}
	report("ready", 1)
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fail(err)
	}
	for _, name := range []string{"other/answer.txt", "own/answer.txt", "late/answer.txt"} {
		b, err := os.ReadFile(filepath.Join(d, name))
		if err != nil {
			report(name, "error "+err.Error())
			continue
		}
		report(name, strings.TrimSpace(string(b)))
	}
	entries, _ := os.ReadDir(d)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	report("list", strings.Join(names, ","))
	report("write_own", fmt.Sprint(os.WriteFile(filepath.Join(d, "own", "new.txt"), []byte("mine\n"), 0o644)))
	report("write_beside", fmt.Sprint(os.WriteFile(filepath.Join(d, "new.txt"), []byte("x"), 0o644)))
	return 0
}

// TestKeepHidesAllButTheBinds hides a folder that holds a writable bind, as the run's
// workspaces folder holds a session's own: the other entries, those the host adds
// later included, are gone, the bind is there and writable, and nothing can be added
// beside it.
func TestKeepHidesAllButTheBinds(t *testing.T) {
	if err := Probe().Supports(LevelStrict); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	host := filepath.Join(dir, "host")
	for _, d := range []string{filepath.Join(host, "other"), filepath.Join(host, "own"), filepath.Join(dir, "new", "d"), filepath.Join(dir, "stage")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	for name, content := range map[string]string{"other/answer.txt": "theirs", "own/answer.txt": "mine"} {
		require.NoError(t, os.WriteFile(filepath.Join(host, name), []byte(content+"\n"), 0o644))
	}
	got := runReadyChild(t, "keep", func() {
		require.NoError(t, os.MkdirAll(filepath.Join(host, "late"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(host, "late", "answer.txt"), []byte("later\n"), 0o644))
	}, "HIDE_DIR="+dir)
	assert.Contains(t, got["other/answer.txt"], "no such file", "LEAK: another entry of the hidden folder shows")
	assert.Contains(t, got["late/answer.txt"], "no such file", "LEAK: an entry the host added later shows")
	assert.Equal(t, "mine", got["own/answer.txt"])
	assert.Equal(t, "own", got["list"], "the hidden folder holds the kept bind alone")
	assert.Equal(t, "<nil>", got["write_own"], "the kept bind is not writable")
	assert.Contains(t, got["write_beside"], "read-only file system", "something can be added beside the kept bind")
	assert.FileExists(t, filepath.Join(host, "own", "new.txt"), "the write to the kept bind did not reach the host")
	assert.NoFileExists(t, filepath.Join(host, "new.txt"))
}

// mountListChild runs in the namespaces of level strict. It binds $HIDE_DIR/host
// read-only at $HIDE_DIR/new/d with mounts below it: a tmpfs at d/a/t, host/sub bound
// at d/a/b/m with a tmpfs stacked on it, and a tmpfs at d/c/deep/x with another in it.
// It hides a name in d, d/a, d/a/b (a folder of an overlay's folder of an overlay's
// folder, as ~/.config/configstore is) and d/c/deep, parents first, as hide does. It
// reports whether each was hidden by an overlay, whether the list of mounts the hider
// kept is what mountinfo lists then, and what it reads.
func mountListChild() int {
	dir := os.Getenv("HIDE_DIR")
	root := filepath.Join(dir, "new")
	d := filepath.Join(root, "d")
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := bindHostReadOnly(dir, d); err != nil {
		return fail(err)
	}
	for _, m := range []struct{ src, at, fstype string }{
		{"tmpfs", "a/t", "tmpfs"}, {filepath.Join(dir, "host", "sub"), "a/b/m", ""}, {"tmpfs", "a/b/m", "tmpfs"},
		{"tmpfs", "c/deep/x", "tmpfs"}, {"tmpfs", "c/deep/x/y", "tmpfs"},
	} {
		flags := uintptr(0)
		if m.fstype == "" {
			flags = unix.MS_BIND | unix.MS_REC
		}
		at := filepath.Join(d, m.at)
		if err := os.MkdirAll(at, 0o755); err != nil {
			return fail(err)
		}
		if err := unix.Mount(m.src, at, m.fstype, flags, ""); err != nil {
			return fail(err)
		}
		if m.fstype != "" {
			if err := os.WriteFile(filepath.Join(at, "mark.txt"), []byte(m.at+"\n"), 0o644); err != nil {
				return fail(err)
			}
		}
	}
	h := &hider{root: root, stage: filepath.Join(dir, "stage"), devNull: "/dev/null", mountinfo: "/proc/self/mountinfo"}
	for _, c := range []struct{ dir, name string }{{"", "secret.txt"}, {"a", "hidden-a"}, {"a/b", "hidden-b"}, {"c/deep", "n"}} {
		if err := h.hideIn(filepath.Join(d, c.dir), []string{c.name}, false); err != nil {
			return fail(err)
		}
	}
	report("ready", 1)
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fail(err)
	}
	report("overlays", !h.noOverlay)
	read, err := mountsUnder(h.mountinfo, root)
	if err != nil {
		return fail(err)
	}
	slices.Sort(read)
	kept := slices.Sorted(slices.Values(h.mounts))
	report("kept", strings.Join(kept, ","))
	report("read", strings.Join(read, ","))
	for _, name := range []string{"a/t/mark.txt", "a/b/m/mark.txt", "c/deep/x/mark.txt", "c/deep/x/y/mark.txt", "secret.txt",
		"a/hidden-a", "a/b/hidden-b", "a/b/kept.txt", "plain.txt"} {
		b, err := os.ReadFile(filepath.Join(d, name))
		if err != nil {
			report(name, "error "+err.Error())
			continue
		}
		report(name, strings.TrimSpace(string(b)))
	}
	return 0
}

// TestHiderKeepsTheMountList hides names in nested folders that hold mounts, stacked
// ones among them: each folder is an overlay (before 2026-12-04, the third folder down
// was one more overlay than the kernel stacks, and it and every folder after it were
// rebuilt), the list of mounts the hider keeps instead of reading mountinfo for each
// folder is what mountinfo lists, and the mounts below the hidden folders still show
// while the hidden names do not.
func TestHiderKeepsTheMountList(t *testing.T) {
	if err := Probe().Supports(LevelStrict); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	host := filepath.Join(dir, "host")
	for _, d := range []string{"host/a/t", "host/a/b/m", "host/c/deep/x", "host/sub", "new/d", "stage"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	for name, content := range map[string]string{"secret.txt": "secret", "a/hidden-a": "secret", "a/b/hidden-b": "secret",
		"a/b/kept.txt": "kept", "c/deep/n": "secret", "plain.txt": "plain"} {
		require.NoError(t, os.WriteFile(filepath.Join(host, name), []byte(content+"\n"), 0o644))
	}
	got := runReadyChild(t, "mountlist", func() {}, "HIDE_DIR="+dir)
	require.Equal(t, "true", got["overlays"], "a folder was rebuilt, not overlaid")
	require.NotEmpty(t, got["read"])
	assert.Equal(t, got["read"], got["kept"], "the hider's list is not mountinfo's")
	assert.Equal(t, "a/t", got["a/t/mark.txt"])
	assert.Equal(t, "a/b/m", got["a/b/m/mark.txt"])
	assert.Equal(t, "c/deep/x", got["c/deep/x/mark.txt"])
	assert.Equal(t, "c/deep/x/y", got["c/deep/x/y/mark.txt"])
	assert.Equal(t, "plain", got["plain.txt"])
	assert.Contains(t, got["secret.txt"], "no such file")
	assert.Contains(t, got["a/hidden-a"], "no such file")
	assert.Contains(t, got["a/b/hidden-b"], "no such file")
	assert.Equal(t, "kept", got["a/b/kept.txt"])
}

func TestSubtree(t *testing.T) {
	for name, c := range map[string]struct {
		mounts []string
		want   []string
	}{
		"below":             {[]string{"/r", "/r/x", "/r/x/y", "/r/z"}, []string{"/r/x/y"}},
		"nothing below":     {[]string{"/r", "/r/x", "/r/xy"}, nil},
		"stacked on x":      {[]string{"/r/x", "/r/x/y", "/r/x", "/r/x/y", "/r/x/y/z"}, []string{"/r/x/y", "/r/x/y/z"}},
		"stacked on x only": {[]string{"/r/x", "/r/x/y", "/r/x"}, nil},
	} {
		t.Run(name, func(t *testing.T) { assert.Equal(t, c.want, subtree(c.mounts, "/r/x")) })
	}
}

// bindHostReadOnly makes this process's mounts private and binds $dir/host read-only at
// d, as a read-only bind of a sandbox's root is.
func bindHostReadOnly(dir, d string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return err
	}
	if err := unix.Mount(filepath.Join(dir, "host"), d, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	return remount([]string{d}, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV)
}

// runReadyChild runs scenario in the namespaces of level strict: once it reports
// ready, whenReady changes the host, and a line on its input has it report what it
// sees, which runReadyChild returns, key by key.
func runReadyChild(t *testing.T, scenario string, whenReady func(), env ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+scenario), env...)
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
		whenReady()
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
	return got
}
