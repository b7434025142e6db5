package escape_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
)

// replaceModes are the two ways the home directory is visible to the tools: in a
// read-only external scope and in a writable one.
var replaceModes = []struct {
	name, mode string
	strict     bool   // whether level strict must hold
	gap        string // why it need not
}{
	{name: "read-only home", mode: "0467", strict: true},
	{name: "writable home", mode: "0667",
		gap: "in a writable scope a masked file is a mount on the file itself, which a host rename over it detaches"},
}

// replace swaps the file at p for one holding content the way useradd replaces
// /etc/shadow and git its credential store: a new file renamed over the old one.
func replace(t *testing.T, p, content string) {
	t.Helper()
	tmp := p + ".new-" + randomHex(4)
	require.NoError(t, os.WriteFile(tmp, []byte(content), 0o600))
	require.NoError(t, os.Rename(tmp, p))
}

// TestMaskOutlivesHostReplace replaces a masked file (the home directory's .netrc) on
// the host while the session's worker runs: the tools must see neither the file the
// worker started with nor the one that replaced it, and still the rest of the home.
func TestMaskOutlivesHostReplace(t *testing.T) {
	for _, m := range replaceModes {
		t.Run(m.name, func(t *testing.T) {
			levels(t, true, func(t *testing.T, level sandbox.Level) {
				fx := newFixture(t, level, options{mode: m.mode})
				netrc := filepath.Join(fx.home, ".netrc")
				old, fresh := "netrc-old-"+randomHex(8), "netrc-new-"+randomHex(8)
				writeFile(t, netrc, "machine example.com password "+old+"\n")
				before := fx.bash(t, "cat ~/.netrc; cat ~/notes.txt", 20).Content
				assert.Contains(t, before, fx.notes, "the home directory is not visible: the test proves nothing")
				replace(t, netrc, "machine example.com password "+fresh+"\n")
				after := fx.bash(t, "cat ~/.netrc; grep -r password ~ 2>/dev/null; cat ~/notes.txt", 20).Content
				held, what := true, ""
				switch {
				case strings.Contains(before, old) || strings.Contains(after, old):
					held, what = false, "the output holds the masked file's first content"
				case strings.Contains(after, fresh):
					held, what = false, "the output holds the content of the file the host renamed over the masked one"
				}
				if level != sandbox.LevelOff {
					assert.Contains(t, after, fx.notes, "the rest of the home directory went with the replaced file")
				}
				fx.judge(t, attempt{name: "replaced .netrc", strict: m.strict, landlock: true, gap: m.gap, off: true},
					held, what, before+after)
			})
		})
	}
}

// TestMaskRacesHostReplace starts workers while the host replaces a masked file over
// and over: every worker must set its sandbox up (the file may be missing for an
// instant at any step) and, where its level must hold, show neither version.
func TestMaskRacesHostReplace(t *testing.T) {
	if testing.Short() {
		t.Skip("races renames on the host (not with -short)")
	}
	for _, m := range replaceModes {
		t.Run(m.name, func(t *testing.T) {
			levels(t, false, func(t *testing.T, level sandbox.Level) {
				home := realTemp(t)
				secret := "netrc-" + randomHex(8)
				netrc := filepath.Join(home, ".netrc")
				writeFile(t, netrc, secret+"\n")
				stop := make(chan struct{})
				var wg sync.WaitGroup
				var swaps int
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						// Unlink, then link anew: the window a backup file
						// (/etc/shadow-) has, where the name is missing.
						_ = os.Remove(netrc)
						tmp := netrc + ".new"
						if os.WriteFile(tmp, []byte(secret+"\n"), 0o600) == nil && os.Rename(tmp, netrc) == nil {
							swaps++
						}
					}
				})
				defer func() {
					close(stop)
					wg.Wait()
					t.Logf("%d swaps of the masked file", swaps)
				}()
				for i := range 20 {
					fx := newFixture(t, level, options{mode: m.mode, home: home})
					r := fx.bash(t, "cat ~/.netrc 2>&1; echo done", 20)
					require.False(t, r.IsError, "worker %d: %s", i, r.Content)
					require.Contains(t, r.Content, "done", "worker %d", i)
					if m.strict || level == sandbox.LevelLandlock {
						assert.NotContains(t, r.Content, secret, "ESCAPE at level %s, worker %d: the masked file was read", level, i)
					}
				}
			})
		})
	}
}

// TestMaskStaysOnItsWay: in a writable home, the tools move aside the folder that holds
// a masked credential store (~/.config, holding ~/.config/gh), and the mask goes with
// it; then the host's gh logs in again and writes its store at the old path, where no
// mask is. The tools must see neither store: the folders on the way to a mask cannot be
// moved.
func TestMaskStaysOnItsWay(t *testing.T) {
	levels(t, true, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0667"})
		hosts := filepath.Join(fx.home, ".config", "gh", "hosts.yml")
		old, fresh := "gho_old"+randomHex(8), "gho_new"+randomHex(8)
		require.NoError(t, os.MkdirAll(filepath.Dir(hosts), 0o700))
		writeFile(t, hosts, "github.com:\n  oauth_token: "+old+"\n")
		before := fx.bash(t, "mv ~/.config ~/moved-config; ls -a ~; cat ~/notes.txt", 20).Content
		assert.Contains(t, before, fx.notes, "the home directory is not visible: the test proves nothing")
		// The host writes the store where it keeps it, as gh auth login would.
		require.NoError(t, os.MkdirAll(filepath.Dir(hosts), 0o700))
		writeFile(t, hosts, "github.com:\n  oauth_token: "+fresh+"\n")
		after := fx.bash(t, "cat ~/.config/gh/hosts.yml; grep -r oauth_token ~ 2>/dev/null", 20).Content
		held, what := true, ""
		switch {
		case strings.Contains(before+after, old):
			held, what = false, "the output holds the masked store"
		case strings.Contains(after, fresh):
			held, what = false, "the output holds the store the host wrote after the tools moved its folder"
		}
		fx.judge(t, attempt{name: "moved ~/.config", strict: true, landlock: true, off: true}, held, what, before+after)
	})
}
