package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/pathname"
)

// hider masks the hidden paths of a new root being assembled.
//
// A mount on a hidden file itself does not last: the kernel detaches a mount of another
// namespace from a file that is unlinked or renamed over, so the first host process to
// replace the file (useradd writing /etc/shadow, git its credential store) would show
// the new one to every running sandbox. So in a read-only bind a hidden path is hidden
// by its name: the folder that holds it becomes a read-only overlay whose top layer
// holds a whiteout of that name (overlay), or, where the kernel mounts no overlay, a
// tmpfs holding the folder's other entries, each bound from the folder (rebuild).
// Either way the hidden path is absent, and nothing on the host can bring it back.
//
// In a writable bind the folder stays the host's, so that what the tools create in it
// reaches the host, and each hidden path that exists gets a mount of its own (mask);
// there a host process that replaces the hidden file lifts its mask. The folders on
// the way to it from the bind are pinned (pinTo), so the tools can move neither the
// mask nor a folder that leads to it.
type hider struct {
	root      string // where the new root is assembled (/newroot)
	stage     string // a folder of the setup's own root, never seen by the sandbox
	devNull   string // the host's /dev/null
	mountinfo string // this process's mountinfo
	// mounts are the mount points of the new root, parents first, as mountinfo lists
	// them: read the first time an overlay needs them and kept by overlay from then
	// on, since reading mountinfo again for each hidden folder cost a strict start
	// about 0.5 ms of its 8 on this VM. Nil when unread, or when a mount the list does
	// not follow has changed them since.
	mounts    []string
	staged    int               // folders staged so far
	views     map[string]string // the lower layer of each folder overlaid so far
	noOverlay bool              // the kernel refused an overlay once: rebuild the rest
	tops      string            // the tmpfs of the overlays' top layers, once mounted
	pinned    map[string]bool   // folders of writable binds pinned so far (pinTo)
}

// hide masks hidden in the new root that binds made. A hidden folder that holds binds
// of its own (a session's workspace, among the other sessions' in the run's output
// folder) keeps them (keep).
func (h *hider) hide(binds []Bind, hidden []string) error {
	names := map[string][]string{} // folder → the hidden names in it
	var dirs []string
	for _, p := range hidden {
		if below := bindsBelow(binds, p); len(below) > 0 {
			if err := h.keep(p, below); err != nil {
				return err
			}
			continue
		}
		b, ok := bindOf(binds, p)
		if !ok || b.Write || b.Path == p {
			if ok && b.Write && exists(h.root+p) { // what is masked (mask hides what exists)
				if err := h.pinTo(b.Path, p); err != nil {
					return err
				}
			}
			if err := h.mask(p); err != nil {
				return err
			}
			continue
		}
		d := filepath.Dir(p)
		if _, seen := names[d]; !seen {
			dirs = append(dirs, d)
		}
		names[d] = append(names[d], filepath.Base(p))
	}
	// Parents first: a folder inside one already hidden in is reached through it.
	slices.SortStableFunc(dirs, func(x, y string) int { return strings.Count(x, "/") - strings.Count(y, "/") })
	for _, d := range dirs {
		b, _ := bindOf(binds, d) // the bind of the hidden paths in d
		if err := h.hideIn(h.root+d, names[d], b.Exec); err != nil {
			return fmt.Errorf("hide in %s: %w", d, err)
		}
	}
	return nil
}

// hideIn hides names in folder dst of the new root: by an overlay where the kernel
// mounts one, else by rebuilding the folder.
func (h *hider) hideIn(dst string, names []string, exec bool) error {
	fi, err := os.Lstat(dst)
	if err != nil || !fi.IsDir() {
		return nil // not visible in the sandbox, nothing to hide
	}
	mode := fi.Mode().Perm()
	if !h.noOverlay {
		err := h.overlay(dst, mode, names, exec)
		if !errors.Is(err, errNoOverlay) {
			return err
		}
		// Nothing was mounted on dst: rebuild it, and the folders after it.
		h.noOverlay = true
	}
	return h.rebuild(dst, mode, names)
}

// lowerOf is where the lower layer of an overlay on folder dst is bound from: dst, or,
// in a folder already overlaid, the same folder in that overlay's lower layer. The
// kernel stacks an overlay on another once, no more, and a layer bound from the new
// root would be of the overlay above it: ~/.config/configstore's, in ~/.config's
// overlay in the home's, would be one too many.
func (h *hider) lowerOf(dst string) string {
	best := ""
	for d := range h.views {
		if below(d, dst) && len(d) > len(best) {
			best = d
		}
	}
	if best == "" {
		return dst
	}
	return h.views[best] + strings.TrimPrefix(dst, best)
}

// subtree lists, of mounts (in mountinfo's order, the order they were made in, so
// parents first), those below mount point m that a recursive bind of m copies: those
// below the topmost mount on m, the last one listed at m. What lies below a mount that
// another was stacked over is not reached through m.
func subtree(mounts []string, m string) []string {
	top := -1
	for i, c := range mounts {
		if c == m {
			top = i
		}
	}
	var out []string
	for _, c := range mounts[top+1:] {
		if strings.HasPrefix(c, m+"/") {
			out = append(out, c)
		}
	}
	return out
}

// errNoOverlay says the kernel mounted no overlay: nothing was changed.
var errNoOverlay = errors.New("no overlay")

// view binds folder dst, with the mounts below it, to a new folder of the stage, where
// it stays reachable once something is mounted over dst.
func (h *hider) view(dst string) (string, error) {
	h.staged++
	v := filepath.Join(h.stage, fmt.Sprintf("hide%d", h.staged))
	if err := os.Mkdir(v, 0o700); err != nil {
		return "", err
	}
	if err := unix.Mount(dst, v, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return "", fmt.Errorf("stage: %w", err)
	}
	return v, nil
}

// overlay mounts a read-only overlay of mode on folder dst: its top layer a tmpfs
// holding a whiteout for each of names, below it dst as it was. The mounts that were
// below dst are bound again on top, since an overlay shows the files of its layers only.
func (h *hider) overlay(dst string, mode os.FileMode, names []string, exec bool) error {
	if h.mounts == nil {
		var err error
		if h.mounts, err = mountsUnder(h.mountinfo, h.root); err != nil {
			return err
		}
	}
	var below []string
	for _, m := range h.mounts {
		if pathname.Within(dst, m) {
			below = append(below, m)
		}
	}
	view, err := h.view(h.lowerOf(dst))
	if err != nil {
		return err
	}
	top, err := h.topLayer(filepath.Base(view), mode)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := whiteout(top, n); err != nil {
			return err
		}
	}
	flags := uintptr(unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV)
	if !exec {
		flags |= unix.MS_NOEXEC
	}
	if err := unix.Mount("overlay", dst, "overlay", flags, "lowerdir="+top+":"+view); err != nil {
		return fmt.Errorf("%w: %w", errNoOverlay, err)
	}
	if h.views == nil {
		h.views = map[string]string{}
	}
	h.views[dst] = view
	h.mounts = append(h.mounts, dst)
	var done []string
	for _, m := range below {
		rel, ok := strings.CutPrefix(m, dst+"/")
		if !ok || slices.ContainsFunc(done, func(d string) bool { return strings.HasPrefix(rel, d+"/") }) ||
			slices.Contains(names, strings.SplitN(rel, "/", 2)[0]) {
			continue // dst itself, carried along with a mount above it, or hidden
		}
		done = append(done, rel)
		if err := unix.Mount(filepath.Join(view, rel), m, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			if !changedSince(err) {
				return fmt.Errorf("%s: %w", rel, err)
			}
			h.mounts = nil // the host changed what is below: read them again
			continue
		}
		if h.mounts != nil {
			h.mounts = append(h.mounts, m)
			h.mounts = append(h.mounts, subtree(below, m)...)
		}
	}
	return nil
}

// topLayer makes a folder for the top layer of an overlay, in the one tmpfs all the
// top layers share. The overlay's folder takes its mode from it.
func (h *hider) topLayer(name string, mode os.FileMode) (string, error) {
	tops := filepath.Join(h.stage, "hide-top")
	if h.tops == "" {
		if err := os.Mkdir(tops, 0o700); err != nil {
			return "", err
		}
		if err := unix.Mount("tmpfs", tops, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
			return "", fmt.Errorf("top layer: %w", err)
		}
		h.tops = tops
	}
	top := filepath.Join(tops, name)
	if err := os.Mkdir(top, 0o700); err != nil {
		return "", err
	}
	return top, os.Chmod(top, mode) // past the umask
}

// whiteout hides name in the overlay's top layer: a character device 0:0 of that name.
func whiteout(top, name string) error {
	if err := unix.Mknod(filepath.Join(top, name), unix.S_IFCHR, 0); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%w: whiteout %s: %w", errNoOverlay, name, err)
	}
	return nil
}

// rebuild replaces folder dst of the new root with a read-only tmpfs of mode that holds
// dst's entries as they are at this moment, each bound from the folder (so with its
// mounts and their flags), but the hidden names. Entries the host makes later do not
// appear; one the host replaces leaves the empty entry its bind was on.
func (h *hider) rebuild(dst string, mode os.FileMode, hidden []string) error {
	h.mounts = nil // its mounts are not followed in the list
	view, err := h.view(dst)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(view)
	if err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dst, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("mode=%o", mode)); err != nil {
		return fmt.Errorf("tmpfs: %w", err)
	}
	for _, e := range entries {
		src, at := filepath.Join(view, e.Name()), filepath.Join(dst, e.Name())
		switch {
		case slices.Contains(hidden, e.Name()):
			continue
		case e.Type()&os.ModeSymlink != 0:
			err = copyLink(src, at)
		default:
			err = bindEntry(src, at, e.IsDir())
		}
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
		}
	}
	return remount([]string{dst}, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV)
}

// copyLink makes at a symbolic link to where src leads (resolved in the sandbox, as
// the host's was).
func copyLink(src, at string) error {
	target, err := os.Readlink(src)
	if err != nil {
		if changedSince(err) {
			return nil // the host removed it since the folder was read
		}
		return err
	}
	return os.Symlink(target, at)
}

// bindEntry binds src, with the mounts below it, on a new empty entry at.
func bindEntry(src, at string, dir bool) error {
	if err := mountPoint(at, dir); err != nil {
		return err
	}
	if err := unix.Mount(src, at, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		if changedSince(err) {
			// The host removed the entry, or replaced it with one of another
			// type, since the folder was read: it is not shown.
			return os.Remove(at)
		}
		return err
	}
	return nil
}

// changedSince reports whether err says the path changed under the call: it is gone,
// or a file where there was a folder or the reverse.
func changedSince(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EISDIR)
}
