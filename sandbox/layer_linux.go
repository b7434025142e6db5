package sandbox

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// layer mounts the cache b at dst, from its host folder src: an overlay whose upper
// layer, in the session's folder layers (b.Upper on the host), takes the tools' writes,
// so that src stays as it is. The folders below src that are mounts of their own are
// not in it. Where the kernel mounts no overlay in a user namespace (Linux before
// 5.11), the cache is a folder of the session's own, empty: the host's stays as it is
// all the same, and the session's build fills its cache itself.
func layer(b Bind, src, dst, layers string) error {
	upper, work := layers+"/upper", layers+"/work"
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("cache %s: %w", b.Path, err)
		}
	}
	// userxattr: in a user namespace the overlay keeps its own attributes in user.*.
	opts := "lowerdir=" + overlayPath(src) + ",upperdir=" + overlayPath(upper) + ",workdir=" + overlayPath(work) + ",userxattr"
	if err := unix.Mount("overlay", dst, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err == nil {
		return nil
	}
	return privateCache(b, upper, dst)
}

// privateCache mounts the empty folder upper, the session's own, at dst in place of
// the cache b.
func privateCache(b Bind, upper, dst string) error {
	if err := unix.Mount(upper, dst, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("cache %s: %w", b.Path, err)
	}
	return remount([]string{dst}, unix.MS_NOSUID|unix.MS_NODEV)
}

// overlayPath escapes path for an overlay's options, which a comma ends and a colon
// splits into layers.
func overlayPath(path string) string {
	return strings.NewReplacer(`\`, `\\`, ",", `\,`, ":", `\:`).Replace(path)
}
