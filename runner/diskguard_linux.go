package runner

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// diskFree reports the space of the disk holding dir.
func diskFree(dir string) (diskSpace, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return diskSpace{}, err
	}
	return diskSpace{avail: st.Bavail * uint64(st.Bsize), size: st.Blocks * uint64(st.Bsize),
		freeInodes: st.Ffree, inodes: st.Files}, nil
}

// allocate makes the file path hold n bytes of the disk: allocated blocks, where
// fallocate(2) can, or n bytes of zeros.
func allocate(path string, n uint64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = unix.Fallocate(int(f.Fd()), 0, 0, int64(n))
	if errors.Is(err, unix.EOPNOTSUPP) {
		err = writeZeros(f, n)
	}
	return errors.Join(err, f.Close())
}

// writeZeros writes n bytes of zeros to f.
func writeZeros(f *os.File, n uint64) error {
	zeros := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, uint64(len(zeros)))
		if _, err := f.Write(zeros[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}
