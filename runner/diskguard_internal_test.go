package runner

import (
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// TestDiskGuardStopsUnderTheFloor drives the guard with a disk whose free space it is
// told (a one-method fake of the statfs reader): above the floor the run goes on, and
// the reserve holds its size on the real disk; under it the run stops once, with the
// disk's cause, and the reserve is released.
func TestDiskGuardStopsUnderTheFloor(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reserve is allocated on Linux")
	}
	const size = 10 << 30
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		var avail atomic.Uint64
		avail.Store(1 << 30)
		free := func(string) (uint64, uint64, error) { return avail.Load(), size, nil }
		var causes []error
		stopped := make(chan struct{})
		g, err := newDiskGuard(dir, 10, free, func(err error) { causes = append(causes, err); close(stopped) }, zap.NewNop())
		require.NoError(t, err)
		reserve := filepath.Join(dir, ReserveFile)
		st, err := os.Stat(reserve)
		require.NoError(t, err)
		assert.Equal(t, int64(reserveFor(10, size)), st.Size())
		time.Sleep(10 * diskPoll) // the bubble's clock
		synctest.Wait()
		assert.Empty(t, causes, "the run stopped above the floor")
		avail.Store(diskFloor(size) - 1)
		<-stopped
		assert.True(t, g.Full(), "a write that finds the disk full retries into the reserve")
		g.close()
		require.Len(t, causes, 1, "the run stops once")
		assert.ErrorIs(t, causes[0], errDiskFull)
		assert.Contains(t, causes[0].Error(), "the disk of "+dir+" had 63 MiB free")
		assert.NoFileExists(t, reserve)
	})
}

// TestDiskGuardNeedsItsRoom: a disk without the room for the reserve and the floor
// fails the run before it starts, naming the folder and the figures; no reserve is
// left behind.
func TestDiskGuardNeedsItsRoom(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	free := func(string) (uint64, uint64, error) { return 70 << 20, 250 << 30, nil }
	_, err := newDiskGuard(dir, 1000, free, func(error) { t.Error("the run was stopped") }, zap.NewNop())
	require.Error(t, err)
	assert.Equal(t, "the disk of "+dir+" has 70 MiB free, and a run of 1000 sessions needs 104 MiB there: "+
		"40 MiB for their results and the run's reports, and 64 MiB kept free (1% of the disk, at most 64 MiB); "+
		"free some space or choose another --out", err.Error())
	assert.NoFileExists(t, filepath.Join(dir, ReserveFile))
}

func TestReserveFor(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		sessions   int
		disk, want uint64
		floor      uint64
	}{
		"one session, a large disk":   {sessions: 1, disk: 250 << 30, want: 8<<20 + 32<<10, floor: 64 << 20},
		"1,000 sessions":              {sessions: 1000, disk: 250 << 30, want: 8<<20 + 1000*32<<10, floor: 64 << 20},
		"100,000 sessions, capped":    {sessions: 100_000, disk: 250 << 30, want: 512 << 20, floor: 64 << 20},
		"a small disk: a tenth of it": {sessions: 10, disk: 16 << 20, want: 16 << 20 / 10, floor: 16 << 20 / 100},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, reserveFor(tt.sessions, tt.disk))
			assert.Equal(t, tt.floor, diskFloor(tt.disk))
		})
	}
}
