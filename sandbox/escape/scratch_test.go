package escape_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/sandbox"
)

// TestScratchSpaceIsBounded fills the private /tmp, /dev/shm and home of a strict
// sandbox, all of them memory: together they must hold no more than the scratch size,
// or one session's runaway write would take the machine's memory, and the kernel would
// kill processes across it, the runner's among them.
func TestScratchSpaceIsBounded(t *testing.T) {
	levels(t, false, func(t *testing.T, level sandbox.Level) {
		if level != sandbox.LevelStrict {
			t.Skip("only level strict has a private /tmp (landlock's TMPDIR is a folder on the host's disk)")
		}
		const size = 16 << 20
		fx := newFixture(t, level, options{mode: "0007", scratch: size})
		r := fx.bash(t, `for p in /tmp/a /dev/shm/b ~/c; do head -c 12M /dev/zero > $p; echo "$p=$?"; done 2>&1
du -cb /tmp/a /dev/shm/b ~/c | tail -1 | cut -f1`, 30)
		require.False(t, r.IsError, r.Content)
		require.Contains(t, r.Content, "/tmp/a=0", "the first write fits: the test proves nothing")
		assert.Contains(t, r.Content, "No space left on device", "a write past the scratch size went through")
		lines := strings.Fields(r.Content)
		held, err := strconv.Atoi(lines[len(lines)-1])
		require.NoError(t, err, r.Content)
		assert.LessOrEqual(t, held, size, "the three scratch folders hold more than the scratch size together")
	})
}

// TestScratchSpaceDefault: without a size in the spec, the scratch space is
// DefaultScratch of the machine's memory.
func TestScratchSpaceDefault(t *testing.T) {
	levels(t, false, func(t *testing.T, level sandbox.Level) {
		if level != sandbox.LevelStrict {
			t.Skip("only level strict has a private /tmp")
		}
		var si unix.Sysinfo_t
		require.NoError(t, unix.Sysinfo(&si))
		want := sandbox.DefaultScratch(uint64(si.Totalram) * uint64(si.Unit))
		fx := newFixture(t, level, options{mode: "0007"})
		r := fx.bash(t, `for p in /tmp /dev/shm ~; do stat -f -c '%b %S' $p; done`, 30)
		require.False(t, r.IsError, r.Content)
		lines := strings.Split(strings.TrimSpace(r.Content), "\n")
		require.Len(t, lines, 3, r.Content)
		for _, l := range lines {
			var blocks, bsize uint64
			_, err := fmt.Sscan(l, &blocks, &bsize)
			require.NoError(t, err, l)
			assert.InDelta(t, want, blocks*bsize, 1<<16, "the scratch folder's size (%s)", l)
		}
	})
}
