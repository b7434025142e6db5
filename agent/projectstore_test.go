package agent_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

// newSessionIDPattern is the shape of agent.NewSessionID.
var newSessionIDPattern = regexp.MustCompile(`^\d{8}-\d{6}-[0-9a-f]{4}$`)

// storeSession writes a session of the project: its first prompt in messages.jsonl,
// summary.txt when summary is set, and events.jsonl last modified at modified.
func storeSession(t *testing.T, ps agent.ProjectStore, id, prompt, summary string, modified time.Time) {
	t.Helper()
	dir := filepath.Join(ps.Root, id)
	d := &agent.DirStore{Dir: dir, Files: ps.Files}
	require.NoError(t, d.Append([]protocol.Turn{{Role: protocol.RoleUser, Blocks: []protocol.Block{{Type: protocol.BlockText, Text: prompt}}}}))
	require.NoError(t, d.Close())
	if summary != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, agent.SummaryFile), []byte(summary), 0o644))
	}
	events := filepath.Join(dir, agent.EventsFile)
	require.NoError(t, os.WriteFile(events, []byte("{}\n"), 0o644))
	require.NoError(t, os.Chtimes(events, modified, modified))
}

func newProjectStore(t *testing.T) agent.ProjectStore {
	t.Helper()
	return agent.ProjectStore{Root: filepath.Join(t.TempDir(), "projects", "-work-p"), Files: sink.NewFiles(nil)}
}

// TestProjectStoreChoose checks which session a run goes on with: a new one, the named
// one (created or resumed), the newest, or a fork of one; and the errors of a name that
// is not a folder name and of a fork of nothing.
func TestProjectStoreChoose(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		stored     bool // the project has sessions old (older) and new (newer)
		name       string
		cont, fork bool
		want       string // "new" means a new session id
		wantErr    error
	}{
		"nothing asked: a new session":             {stored: true, want: "new"},
		"a name: that session":                     {name: "fix-1", want: "fix-1"},
		"a name that is a path":                    {name: "../x", wantErr: agent.ErrSessionName},
		"a name with a leading dot":                {name: ".hidden", wantErr: agent.ErrSessionName},
		"continue: the newest":                     {stored: true, cont: true, want: "new-one"},
		"continue without sessions: a new one":     {cont: true, want: "new"},
		"continue and fork without sessions":       {cont: true, fork: true, wantErr: agent.ErrNoSession},
		"fork a session the project does not have": {stored: true, name: "gone", fork: true, wantErr: agent.ErrNoSession},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ps := newProjectStore(t)
			if tt.stored {
				storeSession(t, ps, "old-one", "Old.", "", now.Add(-time.Hour))
				storeSession(t, ps, "new-one", "New.", "", now.Add(-time.Minute))
			}
			got, err := ps.Choose(tt.name, tt.cont, tt.fork, now)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			if tt.want == "new" {
				assert.Regexp(t, newSessionIDPattern, got)
				assert.True(t, strings.HasPrefix(got, "20261201-200000-"), got)
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestProjectStoreFork checks that a fork is a new session holding a copy of the
// source's messages and summary, through Files, and that the source is left as it was.
func TestProjectStoreFork(t *testing.T) {
	t.Parallel()
	ps := newProjectStore(t)
	storeSession(t, ps, "fix-1", "Start.", "The build is fixed.\n", time.Now())
	src := filepath.Join(ps.Root, "fix-1")
	before, err := os.ReadFile(filepath.Join(src, agent.MessagesFile))
	require.NoError(t, err)

	for _, cont := range []bool{true, false} { // --continue first, while fix-1 is the newest
		name := "fix-1"
		if cont {
			name = ""
		}
		id, err := ps.Choose(name, cont, true, time.Now())
		require.NoError(t, err)
		assert.Regexp(t, newSessionIDPattern, id)
		for _, f := range []string{agent.MessagesFile, agent.SummaryFile} {
			want, err := os.ReadFile(filepath.Join(src, f))
			require.NoError(t, err)
			got, err := os.ReadFile(filepath.Join(ps.Root, id, f))
			require.NoError(t, err, f)
			assert.Equal(t, string(want), string(got), f)
		}
		assert.NoFileExists(t, filepath.Join(ps.Root, id, agent.EventsFile), "a fork starts its own events")
	}
	after, err := os.ReadFile(filepath.Join(src, agent.MessagesFile))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "forking leaves the source unchanged")
}

// TestProjectStoreList checks the listing: newest first, the preview from the summary,
// else the first prompt's first line, cut to 60 characters.
func TestProjectStoreList(t *testing.T) {
	t.Parallel()
	t.Run("empty", func(t *testing.T) {
		t.Parallel()
		var b strings.Builder
		require.NoError(t, newProjectStore(t).List(&b))
		assert.Equal(t, "No sessions found.\n", b.String())
	})
	t.Run("sessions", func(t *testing.T) {
		t.Parallel()
		ps := newProjectStore(t)
		now := time.Now()
		storeSession(t, ps, "summarised", "Fix it.", "\n  Fixed the vet warnings.\nMore.\n", now.Add(-3*time.Hour))
		storeSession(t, ps, "long", strings.Repeat("é", 70)+"\nsecond line", "", now.Add(-2*time.Hour))
		storeSession(t, ps, "newest", "Add a test.\nand more", "", now.Add(-time.Hour))
		var b strings.Builder
		require.NoError(t, ps.List(&b))
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		require.Len(t, lines, 4, b.String())
		assert.Regexp(t, `^NAME +MODIFIED +PREVIEW$`, lines[0])
		assert.Regexp(t, `^newest +\d{4}-\d{2}-\d{2} \d{2}:\d{2} Add a test\.$`, lines[1])
		assert.Regexp(t, `^long +.* `+strings.Repeat("é", 57)+`\.\.\.$`, lines[2])
		assert.Regexp(t, `^summarised +.* Fixed the vet warnings\.$`, lines[3])
	})
}
