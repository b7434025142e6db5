package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// This file holds the hider's ways for writable binds, where a hidden path gets a mount
// of its own (mask) and the folders on the way to it are pinned (pinTo), and for a
// hidden folder that holds binds (keep).

// maskTries bounds how often mask starts over when the host replaces the path under it.
const maskTries = 5

// mask hides host path p that a writable bind exposed: an empty read-only tmpfs over a
// folder, the host's /dev/null over a file. A path the host removes or replaces while
// the mount is made is looked at again.
func (h *hider) mask(p string) error {
	h.mounts = nil // its mounts are not followed in the list
	dst := h.root + p
	var err error
	for range maskTries {
		var fi os.FileInfo
		if fi, err = os.Lstat(dst); err != nil {
			return nil // not visible in the sandbox, nothing to hide
		}
		if err = h.maskOnce(dst, fi); !replacedUnder(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("mask %s: %w", p, err)
	}
	return nil
}

// replacedUnder reports whether err says the path mask was mounting on was removed or
// replaced under it: the path is gone, of another type, or (at the remount) no longer
// the mount.
func replacedUnder(err error) bool {
	return err != nil && (changedSince(err) || errors.Is(err, unix.EINVAL))
}

// maskOnce mounts the mask on dst, which Lstat described as fi. A remount that finds no
// mount (EINVAL) means the file was replaced between the two calls.
func (h *hider) maskOnce(dst string, fi os.FileInfo) error {
	switch {
	case fi.IsDir():
		return unix.Mount("tmpfs", dst, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=0,mode=0500")
	case fi.Mode()&os.ModeSymlink != 0:
		return nil // a link leads somewhere that is masked or absent in its own right
	}
	if err := unix.Mount(h.devNull, dst, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	return remount([]string{dst}, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC)
}

// pinTo pins each folder between writable bind folder (itself a mount) and hidden path
// p below it: a bind of the folder on itself, which the tools can neither rename nor
// remove (EBUSY), as they cannot a mask. Otherwise they could move a folder on the way
// aside, the mask with it, and put another folder or a link in its place: a host
// process that then writes p (the runner its reports to its output folder, a tool its
// credentials) would write it where the tools can read it, or where the link leads.
// Folders are pinned parents first, each once; the pin is recursive, so that the masks
// and binds already below a folder stay in force. A link on the way is left as it is:
// the path it leads to is hidden (and pinned) in its own right (Spec.Hidden).
func (h *hider) pinTo(folder, p string) error {
	h.mounts = nil // its mounts are not followed in the list
	rel, err := filepath.Rel(folder, filepath.Dir(p))
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return nil // p is directly in folder, or not below it
	}
	d := folder
	for _, name := range strings.Split(rel, "/") {
		d = filepath.Join(d, name)
		if h.pinned[d] {
			continue
		}
		dst := h.root + d
		if fi, err := os.Lstat(dst); err != nil || !fi.IsDir() {
			return nil // absent, or a link: nothing further to pin
		}
		if err := unix.Mount(dst, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("pin %s: %w", d, err)
		}
		if h.pinned == nil {
			h.pinned = map[string]bool{}
		}
		h.pinned[d] = true
	}
	return nil
}

// bindsBelow are the binds strictly below folder p, parents first, without those below
// another of them (a recursive bind carries them along).
func bindsBelow(binds []Bind, p string) []Bind {
	var out []Bind
	for _, b := range binds {
		if below(p, b.Path) && !slices.ContainsFunc(out, func(o Bind) bool { return below(o.Path, b.Path) }) {
			out = append(out, b)
		}
	}
	return out
}

// keep hides folder p of the new root but for the binds below it: p becomes a
// read-only tmpfs that holds nothing but them, each bound again, with the mounts below
// it, from where it was mounted.
func (h *hider) keep(p string, below []Bind) error {
	h.mounts = nil // its mounts are not followed in the list
	dst := h.root + p
	fi, err := os.Lstat(dst)
	if err != nil || !fi.IsDir() {
		return nil // not visible in the sandbox, nothing to hide
	}
	view, err := h.view(dst)
	if err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dst, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, fmt.Sprintf("mode=%o", fi.Mode().Perm())); err != nil {
		return fmt.Errorf("hide %s: %w", p, err)
	}
	for _, b := range below {
		rel := strings.TrimPrefix(b.Path, p)
		st, err := os.Lstat(view + rel)
		if err != nil {
			continue // an optional bind the host does not have
		}
		if err := mountPoint(dst+rel, st.IsDir()); err != nil {
			return err
		}
		if err := unix.Mount(view+rel, dst+rel, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("hide %s: keep %s: %w", p, b.Path, err)
		}
	}
	return remount([]string{dst}, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC)
}
