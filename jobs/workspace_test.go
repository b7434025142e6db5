package jobs

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckWorkspaces checks each way a workspace cannot be made, with the place in
// the spec that decides it.
func TestCheckWorkspaces(t *testing.T) {
	notRepo := func(dir string) error { return errors.New(filepath.Base(dir) + " is not a git repository") }
	tests := map[string]struct {
		defaults string
		give     []string // lines after "jobs:", from line 4 on
		repo     func(string) error
		want     []string // "line:col field: message", message relative to the spec's folder
		files    map[string]string
	}{
		"every folder there": {
			give:  []string{"  - {id: a, prompt: hi, workspace: {dir: ws}}"},
			files: map[string]string{"ws/x": ""},
		},
		"the job's folder": {
			give: []string{"  - {id: a, prompt: hi, workspace: {dir: nowhere}, repeat: 3}"},
			want: []string{"4:42 jobs[0].workspace.dir: workspace $DIR/nowhere: no such file or directory"},
		},
		"the defaults' folder, once for every job": {
			defaults: "{workspace: {dir: gone}}",
			give:     []string{"  - {id: a, prompt: hi}", "  - {id: b, prompt: hi}"},
			want:     []string{"2:29 defaults.workspace.dir: workspace $DIR/gone: no such file or directory"},
		},
		"a file": {
			give:  []string{"  - {id: a, prompt: hi, workspace: {dir: f}}"},
			files: map[string]string{"f": ""},
			want:  []string{"4:42 jobs[0].workspace.dir: workspace $DIR/f is not a directory"},
		},
		"a matrix value": {
			give:  []string{"  - {id: a, prompt: hi, matrix: {workspace.dir: [ws, nope]}}"},
			files: map[string]string{"ws/x": ""},
			want:  []string{"4:54 jobs[0].matrix.workspace.dir[1]: workspace $DIR/nope: no such file or directory"},
		},
		"worktree of no repository": {
			give:  []string{"  - {id: a, prompt: hi, workspace: {dir: ws, mode: worktree}}"},
			files: map[string]string{"ws/x": ""},
			repo:  notRepo,
			want:  []string{"4:52 jobs[0].workspace.mode: mode worktree takes a git worktree of the workspace folder, and ws is not a git repository"},
		},
		"worktree of a repository": {
			give:  []string{"  - {id: a, prompt: hi, workspace: {dir: ws, mode: worktree}}"},
			files: map[string]string{"ws/x": ""},
			repo:  func(string) error { return nil },
		},
		"copy needs no repository": {
			give:  []string{"  - {id: a, prompt: hi, workspace: {dir: ws}}"},
			files: map[string]string{"ws/x": ""},
			repo:  notRepo,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			defaults := "defaults: {}"
			if tt.defaults != "" {
				defaults = "defaults: " + tt.defaults
			}
			s := parseOK(t, dir, doc(append([]string{"version: 1", defaults, "jobs:"}, tt.give...)...), nil)
			err := s.CheckWorkspaces(sessionsOK(t, s), tt.repo)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			var se *SpecError
			require.ErrorAs(t, err, &se)
			var got []string
			for _, p := range se.Errors {
				assert.Equal(t, filepath.Join(dir, "spec.yaml"), p.File)
				got = append(got, fmt.Sprintf("%d:%d %s: %s", p.Line, p.Column, p.Field, strings.ReplaceAll(p.Message, dir, "$DIR")))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
