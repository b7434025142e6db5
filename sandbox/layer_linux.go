package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// layer mounts the cache b at dst, from its host folder src: an overlay whose upper
// layer, on the host in b.Upper, takes the tools' writes, so that src stays as it is.
// The folders below src that are mounts of their own are not in it.
func layer(b Bind, src, dst string) error {
	upper, work := "/oldroot"+b.Upper+"/upper", "/oldroot"+b.Upper+"/work"
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("cache %s: %w", b.Path, err)
		}
	}
	// userxattr: in a user namespace the overlay keeps its own attributes in user.*.
	opts := "lowerdir=" + src + ",upperdir=" + upper + ",workdir=" + work + ",userxattr"
	if err := unix.Mount("overlay", dst, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("cache %s: the kernel mounts no overlay for it here (%w): make it a writable path instead, or use level landlock, where a cache is writable", b.Path, err)
	}
	return nil
}
