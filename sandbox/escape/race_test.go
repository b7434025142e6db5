package escape_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
)

// raceWrites is how many Write calls race the flipping link, per level.
var raceWrites = map[sandbox.Level]int{sandbox.LevelStrict: 3000, sandbox.LevelLandlock: 1500}

// TestSymlinkRace flips ws/link between a workspace file and the outside target, on
// the host, while Write calls write through it: the target must come out unchanged,
// whichever way each call saw the link.
func TestSymlinkRace(t *testing.T) {
	if testing.Short() {
		t.Skip("races symlink swaps (not with -short)")
	}
	levels(t, false, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0467"})
		link := filepath.Join(fx.ws, "link")
		inside := filepath.Join(fx.ws, "inside.txt")
		require.NoError(t, os.Symlink(inside, link))
		before, err := snapshot(fx.target)
		require.NoError(t, err)

		stop := make(chan struct{})
		var wg sync.WaitGroup
		var flips int
		wg.Go(func() {
			tmp := link + ".new"
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				dest := inside
				if i%2 == 0 {
					dest = fx.target
				}
				_ = os.Remove(tmp)
				if os.Symlink(dest, tmp) == nil && os.Rename(tmp, link) == nil {
					flips++
				}
			}
		})
		input, err := json.Marshal(map[string]string{"path": "link", "content": "RACE\n"})
		require.NoError(t, err)
		var wrote, refused int
		for range raceWrites[level] {
			if r := fx.run(t, "Write", string(input)); r.IsError {
				refused++
			} else {
				wrote++
			}
		}
		close(stop)
		wg.Wait()
		t.Logf("level %s: %d link flips, %d writes went through, %d were refused", level, flips, wrote, refused)
		after, err := snapshot(fx.target)
		require.NoError(t, err)
		assert.Equal(t, before, after, "ESCAPE at level %s: a write through the flipping link changed the outside target: %s", level, before.diff(after, nil))
		assert.Positive(t, flips, "the link never flipped")
		assert.Positive(t, wrote, "no write went through the link to the workspace file: the race proves nothing")
	})
}

// hardLinkAttempts link the outside target into the workspace, then write through
// the link: the target must not change.
var hardLinkAttempts = []attempt{
	{name: "ln then echo", cmd: "ln {TARGET} h-{NAME} ; echo x >> h-{NAME}", effect: unchanged("{TARGET}"), strict: true, landlock: true, off: true},
	{name: "ln then Write tool", cmd: "ln {TARGET} hw", effect: unchanged("{TARGET}"), strict: true, landlock: true},
	{name: "Write tool through hard link", tool: "Write", cmd: `{"path":"hw","content":"x"}`, effect: unchanged("{TARGET}"), strict: true, landlock: true},
	{name: "Edit tool through hard link", tool: "Edit", cmd: `{"path":"hw","old_string":"must","new_string":"may"}`, effect: unchanged("{TARGET}"), strict: true, landlock: true},
	{name: "python link then write", needs: "python3",
		cmd: `python3 -c "import os; os.link('{TARGET}', 'hp-{NAME}'); open('hp-{NAME}', 'a').write('x')"`, effect: unchanged("{TARGET}"), strict: true, landlock: true, off: true},
	{name: "cp -l then write", cmd: "cp -l {TARGET} hc-{NAME} && echo x >> hc-{NAME}", effect: unchanged("{TARGET}"), strict: true, landlock: true, off: true},
}

func TestHardLinks(t *testing.T) {
	levels(t, true, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0467"})
		runTable(t, fx, hardLinkAttempts)
		if level != sandbox.LevelOff {
			fx.assertTargetIntact(t)
			fi, err := os.Stat(fx.target)
			require.NoError(t, err)
			assert.Equal(t, uint64(1), uint64(fi.Sys().(*syscall.Stat_t).Nlink), "the target has another link")
		}
	})
}
