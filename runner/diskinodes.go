package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"go.uber.org/zap"
)

// inodeReserve holds, as empty files in a folder of the output folder, the inodes a
// run's results and reports need. Making thousands of files costs an ext4 disk a third
// of a second (BenchmarkReserveInodes), for a risk that a disk of millions of free
// inodes does not run: so the reserve is made only once the disk's free inodes come
// within inodeMargin of what the run needs, at its start or at a poll of the guard, a
// margin more than the fastest tool makes in a poll's time. The methods of a nil
// reserve (a disk that counts no inodes) do nothing.
type inodeReserve struct {
	dir   string
	want  uint64 // the inodes the run needs
	floor uint64 // free inodes under which the run stops

	mu    sync.Mutex
	made  bool   // the folder was made, with as many files as the disk had room for
	files uint64 // the files it holds, named 0… in base 36
}

// inodeMargin is how far above what the run needs the disk's free inodes may fall
// before the reserve is made: a tool that makes empty files on a tmpfs makes about
// 30,000 in the guard's poll of 100 ms.
const inodeMargin = 100_000

// newInodeReserve is the reserve in folder dir of a run of n sessions on a disk of
// total inodes.
func newInodeReserve(dir string, n int, total uint64) *inodeReserve {
	return &inodeReserve{dir: dir, want: inodesFor(n, total), floor: inodeFloor(total)}
}

// inodeFloor is the free inodes of a disk of n inodes under which a run stops: 1% of
// them, at most 10,000.
func inodeFloor(n uint64) uint64 { return min(n/100, 10_000) }

// inodesFor is the reserve of inodes of a run of n sessions on a disk of total inodes:
// 32 for the run's reports and their temporary files, and 3 a session (its folder,
// its result, a patch), at most a tenth of the disk's.
func inodesFor(n int, total uint64) uint64 {
	return min(32+3*uint64(n), total/10)
}

// hold makes the reserve, once, when free inodes are within inodeMargin of what the
// run needs. A disk that fills as it is made leaves it with what it has room for.
func (r *inodeReserve) hold(free uint64, log *zap.Logger) {
	if r == nil || free >= r.want+r.floor+inodeMargin {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.made || r.want == 0 {
		return
	}
	if err := os.Mkdir(r.dir, 0o700); err != nil {
		log.Warn("hold a reserve of inodes for the results on the output folder's disk", zap.Uint64("free_inodes", free), zapErr(err))
		return
	}
	r.made = true
	for i := range r.want - 1 { // the folder is one
		f, err := os.OpenFile(filepath.Join(r.dir, strconv.FormatUint(i, 36)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			log.Warn("hold a reserve of inodes for the results on the output folder's disk",
				zap.Uint64("held", i+1), zap.Uint64("wanted", r.want), zapErr(err))
			return
		}
		r.files = i + 1
	}
}

// releasePart removes a quarter of the reserve's files, at least 16, or the rest with
// the folder; it reports whether it held any.
func (r *inodeReserve) releasePart(log *zap.Logger) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.made {
		return false
	}
	n := min(r.files, max(r.files/4, 16))
	if n == r.files {
		r.made, r.files = false, 0
		if err := os.RemoveAll(r.dir); err != nil {
			log.Warn("release the reserve of inodes", zapErr(err))
		}
		return true
	}
	for ; n > 0; n-- {
		r.files--
		if err := os.Remove(filepath.Join(r.dir, strconv.FormatUint(r.files, 36))); err != nil {
			log.Warn("release the reserve of inodes", zapErr(err))
		}
	}
	return true
}

// under reports whether free inodes are under the floor.
func (r *inodeReserve) under(free uint64) bool { return r != nil && free < r.floor }

// held reports whether the reserve was made.
func (r *inodeReserve) held() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.made
}

// release removes the reserve.
func (r *inodeReserve) release(log *zap.Logger) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.made {
		return
	}
	if err := os.RemoveAll(r.dir); err != nil {
		log.Warn("release the reserve of inodes", zapErr(err))
	}
	r.made, r.files = false, 0
}
