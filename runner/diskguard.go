package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentrun/agentrun/protocol"
)

// ReserveFile is the space a run holds in its output folder for the sessions' results
// and its reports, and ReserveInodes the folder of empty files in which it holds the
// inodes they need, released when the disk fills.
const (
	ReserveFile   = ".agentrun.reserve"
	ReserveInodes = ".agentrun.reserve.d"
)

// diskSpace is what statfs(2) tells of a disk: its free bytes (for a process without
// privileges) and size, its free inodes and their number (0 where the file system
// does not count them, as btrfs does not).
type diskSpace struct {
	avail, size, freeInodes, inodes uint64
}

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
// it full, the guard stops the run (its cause names the disk). The reserve is given up
// a part at a time, to each write of the run's files that finds the disk full, and not
// before: a tool that has not yet been stopped would take what is freed at once.
type diskGuard struct {
	dir     string // the output folder
	reserve string // the reserve's path; "" when none could be made
	floor   uint64 // free bytes under which the run stops
	mu      sync.Mutex
	left    uint64 // the bytes the reserve still holds
	// inodes holds the inodes the results need, nil where the disk counts none: a
	// tool that makes files until none is left (a test suite's fixtures, an unpacked
	// cache) leaves the run no file to write its results to, however many bytes are
	// free.
	inodes *inodeReserve
	free   func(dir string) (diskSpace, error)
	stop   func(cause error)
	log    *zap.Logger

	once  sync.Once
	cause error // why trip stopped the run, once it did
	done  chan struct{}
	ended sync.WaitGroup
}

// newDiskGuard holds a reserve for a run of sessions in the output folder dir and
// watches its disk until close; stop ends the run. free reports a folder's disk's
// space. It fails when the disk has not the room for the reserve and the floor, in
// bytes or in inodes.
func newDiskGuard(dir string, sessions int, free func(string) (diskSpace, error), stop func(error), log *zap.Logger) (*diskGuard, error) {
	g := &diskGuard{dir: dir, free: free, stop: stop, log: log, done: make(chan struct{})}
	d, err := free(dir)
	if err != nil {
		if !errors.Is(err, errNoStatfs) {
			log.Warn("read the free space of the output folder's disk; no reserve is held", zapErr(err))
		}
		return g, nil
	}
	g.floor = diskFloor(d.size)
	want := reserveFor(sessions, d.size)
	if d.avail < want+g.floor {
		return nil, fmt.Errorf("the disk of %s has %d MiB free, and a run of %d sessions needs %d MiB there: "+
			"%d MiB for their results and the run's reports, and %d MiB kept free (1%% of the disk, at most 64 MiB); "+
			"free some space or choose another --out", dir, d.avail>>20, sessions, ceilMiB(want+g.floor), ceilMiB(want), ceilMiB(g.floor))
	}
	if d.inodes > 0 {
		g.inodes = newInodeReserve(filepath.Join(dir, ReserveInodes), sessions, d.inodes)
		if need := g.inodes.want + g.inodes.floor; d.freeInodes < need {
			return nil, fmt.Errorf("the disk of %s has %d free inodes (files), and a run of %d sessions needs %d there: "+
				"%d for their results and the run's reports, and %d kept free (1%% of the disk's, at most 10,000); "+
				"remove some files or choose another --out", dir, d.freeInodes, sessions, need, g.inodes.want, g.inodes.floor)
		}
	}
	path := filepath.Join(dir, ReserveFile)
	if err := allocate(path, want); err != nil {
		_ = os.Remove(path)
		log.Warn("hold a reserve for the results on the output folder's disk", zap.Uint64("free_mib", d.avail>>20), zapErr(err))
	} else {
		g.reserve, g.left = path, want
	}
	g.inodes.hold(d.freeInodes, log)
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

// watch stops the run once the disk's free space or inodes fall under their floor.
func (g *diskGuard) watch() {
	t := time.NewTicker(diskPoll)
	defer t.Stop()
	for {
		select {
		case <-g.done:
			return
		case <-t.C:
			d, err := g.free(g.dir)
			if err != nil {
				continue
			}
			g.inodes.hold(d.freeInodes, g.log)
			if d.avail < g.floor || g.inodes.under(d.freeInodes) {
				g.trip(d)
				return
			}
		}
	}
}

// Full is OnFull's function for the run's files: a write found the disk full. It stops
// the run and releases a part of the reserve for the write to be tried again; it
// reports whether there was a part to release.
func (g *diskGuard) Full() bool {
	if g == nil {
		return false
	}
	g.Stop()
	return g.releasePart()
}

// Stop is the artifacts' function: a stream's write found the disk full. It stops the
// run and releases nothing: a stream's line is not written again.
func (g *diskGuard) Stop() {
	if g == nil {
		return
	}
	d, _ := g.free(g.dir)
	g.trip(d)
}

// trip stops the run, once, with the cause of the disk d.
func (g *diskGuard) trip(d diskSpace) {
	g.once.Do(func() {
		left := fmt.Sprintf("%d MiB free", d.avail>>20)
		if g.inodes.under(d.freeInodes) {
			left = fmt.Sprintf("%d free inodes (files) left", d.freeInodes)
		}
		cause := fmt.Errorf("%w: the disk of %s had %s: agentrun stopped the run's sessions and wrote their results into the space it had reserved",
			errDiskFull, g.dir, left)
		g.log.Error("the output folder's disk is full: the run stops", zap.String("out", g.dir),
			zap.Uint64("free_mib", d.avail>>20), zap.Uint64("free_inodes", d.freeInodes))
		g.cause = cause
		g.stop(cause)
	})
}

// cancelled stops the run, as Stop does, for a session's write that found the disk
// full before the session could run, and is that session's error: cancelled, with the
// run's cause (that of the guard's first stop, which trip's Do has set when Stop
// returns), as the sessions that were running get it.
func (g *diskGuard) cancelled() *protocol.Error {
	g.Stop()
	return &protocol.Error{Kind: protocol.ErrCancelled, Message: g.cause.Error()}
}

// releasePart gives up a quarter of what the reserve holds, at least 4 MiB and 16
// inodes, or the rest; it reports whether it held anything.
func (g *diskGuard) releasePart() bool {
	freed := g.inodes.releasePart(g.log)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.left == 0 {
		return freed
	}
	g.left -= min(g.left, max(g.left/4, 4<<20))
	var err error
	if g.left == 0 {
		err = os.Remove(g.reserve)
	} else {
		err = os.Truncate(g.reserve, int64(g.left))
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		g.log.Warn("release the reserve", zapErr(err))
	}
	return true
}

// release removes the reserve.
func (g *diskGuard) release() {
	g.mu.Lock()
	if g.left > 0 {
		if err := os.Remove(g.reserve); err != nil && !errors.Is(err, os.ErrNotExist) {
			g.log.Warn("release the reserve", zapErr(err))
		}
		g.left = 0
	}
	g.mu.Unlock()
	g.inodes.release(g.log)
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
