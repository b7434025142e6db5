package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"
)

// ReserveFile is the space a run holds in its output folder for the sessions' results
// and its reports, released when the disk fills.
const ReserveFile = ".agentrun.reserve"

// diskPoll is how often the guard reads the free space of the output folder's disk.
const diskPoll = 100 * time.Millisecond

// errDiskFull is the cancel cause of a run whose output folder's disk filled up.
var errDiskFull = errors.New("disk full")

// errNoStatfs is diskFree's error where it cannot read a disk's free space: the guard
// then holds no reserve, without a word each run.
var errNoStatfs = errors.New("disk space: read here on Linux only")

// diskGuard keeps a run able to write what it owes: every session's result.json and the
// run's summaries and reports. The tools share the output folder's disk (copies and
// worktrees live in it, and a shared workspace may too), and nothing bounds what they
// write there: a runaway log or build fills it, and the results of every session are
// lost with the run's reports. So the run holds a reserve, a file of the space those
// need; and when the disk's free space falls under a floor, or a write of the run finds
// it full, the guard stops the run (its cause names the disk) and releases the
// reserve, into which the results and reports are written.
type diskGuard struct {
	dir     string // the output folder
	reserve string // the reserve's path; "" when none could be made
	floor   uint64 // free bytes under which the run stops
	free    func(dir string) (uint64, uint64, error)
	stop    func(cause error)
	log     *zap.Logger

	once  sync.Once
	done  chan struct{}
	ended sync.WaitGroup
}

// newDiskGuard holds a reserve for a run of sessions in the output folder dir and
// watches its disk until close; stop ends the run. free reports a folder's disk's free
// bytes and size. It fails when the disk has not the room for the reserve and the
// floor.
func newDiskGuard(dir string, sessions int, free func(string) (uint64, uint64, error), stop func(error), log *zap.Logger) (*diskGuard, error) {
	g := &diskGuard{dir: dir, free: free, stop: stop, log: log, done: make(chan struct{})}
	avail, size, err := free(dir)
	if err != nil {
		if !errors.Is(err, errNoStatfs) {
			log.Warn("read the free space of the output folder's disk; no reserve is held", zapErr(err))
		}
		return g, nil
	}
	g.floor = diskFloor(size)
	want := reserveFor(sessions, size)
	if avail < want+g.floor {
		return nil, fmt.Errorf("the disk of %s has %d MiB free, and a run of %d sessions needs %d MiB there: "+
			"%d MiB for their results and the run's reports, and %d MiB kept free (1%% of the disk, at most 64 MiB); "+
			"free some space or choose another --out", dir, avail>>20, sessions, ceilMiB(want+g.floor), ceilMiB(want), ceilMiB(g.floor))
	}
	path := filepath.Join(dir, ReserveFile)
	if err := allocate(path, want); err != nil {
		_ = os.Remove(path)
		log.Warn("hold a reserve for the results on the output folder's disk", zap.Uint64("free_mib", avail>>20), zapErr(err))
	} else {
		g.reserve = path
	}
	g.ended.Go(g.watch)
	return g, nil
}

// ceilMiB is n bytes in MiB, rounded up: what a run needs is not rounded away.
func ceilMiB(n uint64) uint64 { return (n + 1<<20 - 1) >> 20 }

// diskFloor is the free space of a disk of size bytes under which a run stops: 1% of
// it, at most 64 MiB.
func diskFloor(size uint64) uint64 { return min(size/100, 64<<20) }

// reserveFor is the reserve of a run of n sessions on a disk of size bytes: 8 MiB and
// 32 KiB a session (a result, its share of the summaries and the report), at most
// 512 MiB and a tenth of the disk.
func reserveFor(n int, size uint64) uint64 {
	return min(8<<20+uint64(n)*32<<10, 512<<20, size/10)
}

// watch stops the run once the disk's free space falls under the floor.
func (g *diskGuard) watch() {
	t := time.NewTicker(diskPoll)
	defer t.Stop()
	for {
		select {
		case <-g.done:
			return
		case <-t.C:
			avail, _, err := g.free(g.dir)
			if err == nil && avail < g.floor {
				g.full(avail)
				return
			}
		}
	}
}

// Full is OnFull's function for the run's files: a write found the disk full. It
// reports whether the reserve was there to release.
func (g *diskGuard) Full() bool {
	if g == nil {
		return false
	}
	avail, _, _ := g.free(g.dir)
	return g.full(avail)
}

// full stops the run and releases the reserve, once; it reports whether a reserve was
// held.
func (g *diskGuard) full(avail uint64) bool {
	g.once.Do(func() {
		cause := fmt.Errorf("%w: the disk of %s had %d MiB free: agentrun stopped the run's sessions and wrote their results into the space it had reserved",
			errDiskFull, g.dir, avail>>20)
		g.log.Error("the output folder's disk is full: the run stops", zap.String("out", g.dir), zap.Uint64("free_mib", avail>>20))
		g.stop(cause)
		g.release()
	})
	return g.reserve != ""
}

// release removes the reserve.
func (g *diskGuard) release() {
	if g.reserve == "" {
		return
	}
	if err := os.Remove(g.reserve); err != nil && !errors.Is(err, os.ErrNotExist) {
		g.log.Warn("release the reserve", zapErr(err))
	}
}

// close stops watching and releases the reserve.
func (g *diskGuard) close() {
	if g == nil {
		return
	}
	close(g.done)
	g.ended.Wait()
	g.release()
}
