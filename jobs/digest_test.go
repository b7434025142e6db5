package jobs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// digestBase is a spec with two jobs; the cases below edit it.
var digestBase = doc(
	"version: 1",
	"concurrency: 2",
	"defaults: {model: m, timeout: 10m}",
	"jobs:",
	"  - id: a",
	"    prompt: Fix {{ .matrix.x }}.",
	"    matrix: {x: [one, two]}",
	"  - id: b",
	"    prompt: Describe ${THING:-it}.",
)

func digests(t *testing.T, dir, give string, env map[string]string) (string, map[string]string) {
	t.Helper()
	s := parseOK(t, dir, give, env)
	per := map[string]string{}
	for _, se := range sessionsOK(t, s) {
		per[se.Key] = se.Digest
	}
	d := s.Digest()
	require.Len(t, d, 64)
	return d, per
}

func TestDigestIsStable(t *testing.T) {
	dir := t.TempDir()
	d1, per1 := digests(t, dir, digestBase, nil)
	d2, per2 := digests(t, dir, digestBase, nil)
	assert.Equal(t, d1, d2)
	assert.Equal(t, per1, per2)

	// A checkout elsewhere gives the same digests: paths count relative to the spec.
	d3, per3 := digests(t, t.TempDir(), digestBase, nil)
	assert.Equal(t, d1, d3)
	assert.Equal(t, per1, per3)

	// Pinned, so that a change of the canonical form is a conscious one (it makes every
	// earlier result look stale to --resume).
	d, _ := digests(t, dir, doc("version: 1", "jobs:", "  - id: hello", "    prompt: Say hello."), nil)
	assert.Equal(t, "d139908bf54c5bdaca31a978ab84c3c61a57294e914fa3fe3f6f384cefa5493c", d)
}

func TestDigestChanges(t *testing.T) {
	base, basePer := digests(t, t.TempDir(), digestBase, nil)
	tests := map[string]struct {
		old, new string // replace old by new in digestBase
		env      map[string]string
		changed  []string // session keys whose digest changes
	}{
		"prompt of one job":      {old: "Fix {{", new: "Repair {{", changed: []string{"a+x=one", "a+x=two"}},
		"one matrix value":       {old: "[one, two]", new: "[one, three]", changed: []string{"a+x=two", "a+x=three"}},
		"a default":              {old: "timeout: 10m", new: "timeout: 11m", changed: []string{"a+x=one", "a+x=two", "b"}},
		"a variable's value":     {env: map[string]string{"THING": "that"}, changed: []string{"b"}},
		"a job setting":          {old: "    prompt: Describe", new: "    max_turns: 3\n    prompt: Describe", changed: []string{"b"}},
		"concurrency":            {old: "concurrency: 2", new: "concurrency: 3"},
		"comments and spelling":  {old: "defaults: {model: m, timeout: 10m}", new: "# defaults\ndefaults:\n  timeout: 10m\n  model: \"m\""},
		"run budget and prices":  {old: "concurrency: 2", new: "concurrency: 2\nbudget: {max_cost_usd: 9}\nprices: {m: {input: 1, output: 2}}"},
		"an x- key":              {old: "concurrency: 2", new: "concurrency: 2\nx-note: hello"},
		"a sandbox default":      {old: "timeout: 10m}", new: "timeout: 10m, sandbox: {level: strict}}", changed: []string{"a+x=one", "a+x=two", "b"}},
		"one job's sandbox path": {old: "    prompt: Describe", new: "    sandbox: {writable: [out]}\n    prompt: Describe", changed: []string{"b"}},
		"one job's network":      {old: "    prompt: Describe", new: "    network: {allow: [example.com]}\n    prompt: Describe", changed: []string{"b"}},
		"empty sandbox and network lists": {
			old: "timeout: 10m}", new: "timeout: 10m, sandbox: {writable: [], readable: []}, network: {allow: []}}",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			give := digestBase
			if tt.old != "" {
				require.Contains(t, give, tt.old)
				give = strings.Replace(give, tt.old, tt.new, 1)
			}
			got, gotPer := digests(t, t.TempDir(), give, tt.env)
			if len(tt.changed) == 0 {
				assert.Equal(t, base, got)
			} else {
				assert.NotEqual(t, base, got)
			}
			var changed []string
			for key, d := range gotPer {
				if basePer[key] != d {
					changed = append(changed, key)
				}
			}
			for key := range basePer {
				if _, ok := gotPer[key]; !ok {
					changed = append(changed, key)
				}
			}
			assert.ElementsMatch(t, tt.changed, changed)
		})
	}
}

// TestDigestOfSandboxPaths checks that sandbox paths count relative to the spec, like
// the workspace, and that each of them counts.
func TestDigestOfSandboxPaths(t *testing.T) {
	give := doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", "    sandbox: {writable: [out, ~/.cache], readable: [../data]}")
	d1, _ := digests(t, t.TempDir(), give, nil)
	d2, _ := digests(t, t.TempDir(), give, nil)
	assert.Equal(t, d1, d2, "a checkout elsewhere keeps the digest")
	for _, edit := range [][2]string{{"out", "out2"}, {"~/.cache", "~/.cache2"}, {"../data", "../data2"}} {
		d3, _ := digests(t, t.TempDir(), strings.Replace(give, edit[0], edit[1], 1), nil)
		assert.NotEqual(t, d1, d3, "%s to %s", edit[0], edit[1])
	}
}

// TestDigestOfAbsolutePaths checks that an absolute path keeps its digest when the
// checkout moves to a directory of another depth (CI clones to /check/work/main).
func TestDigestOfAbsolutePaths(t *testing.T) {
	give := doc("version: 1", "jobs:", "  - id: a", "    prompt: hi",
		"    workspace: {dir: /srv/repo}",
		"    sandbox: {writable: [/var/tmp/x, out], readable: [/opt/data, ../data]}")
	base := t.TempDir()
	shallow := filepath.Join(base, "a")
	deep := filepath.Join(base, "b", "c", "d", "e")
	require.NoError(t, os.MkdirAll(shallow, 0o755))
	require.NoError(t, os.MkdirAll(deep, 0o755))
	d1, _ := digests(t, shallow, give, nil)
	d2, _ := digests(t, deep, give, nil)
	assert.Equal(t, d1, d2)
}

func TestDigestFollowsPromptFiles(t *testing.T) {
	dir := t.TempDir()
	give := doc("version: 1", "jobs:", "  - id: a", "    prompt_file: p.md")
	writeFiles(t, dir, map[string]string{"p.md": "one"})
	d1, _ := digests(t, dir, give, nil)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.md"), []byte("two"), 0o644))
	d2, _ := digests(t, dir, give, nil)
	assert.NotEqual(t, d1, d2)
}
