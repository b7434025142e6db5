package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol/eventschema"
)

// The npm packages the claude format is checked against, pinned so that the check
// changes only when they are bumped here. The SDK's optional dependencies (the Claude
// Code binary, hundreds of MB) are not installed: only its types are read.
var claudeSDKPackages = []string{
	"@anthropic-ai/claude-agent-sdk@0.3.333",
	"@anthropic-ai/sdk@1.15.0",
	"typescript@5.9.3",
	"@types/node@20",
}

// TestClaudeSDKTypes runs sessions that end in success, max turns, a cut answer, retries
// and a model API error, with a sub-agent and with structured output, prints them in the
// claude format, and type-checks every line, and every line of the claude sink's
// golden files, against the Claude Agent SDK's published SDKMessage type with
// TypeScript. Lines may carry members the SDK does not declare (agentrun's status,
// job_id, sandbox), as Claude Code's own output does; every member the SDK declares
// must have its type. It also checks that replaying a session's events.jsonl as claude
// gives exactly that session's lines. It needs npm (and the npm registry the first
// time; the packages are kept in the user cache folder).
func TestClaudeSDKTypes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: the SDK type check installs npm packages and runs tsc")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "TestClaudeSDKTypes"))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	out := filepath.Join(dir, "out")
	o := agentrun(t, invocation{args: []string{"run", "spec.yaml", "--out", out, "--output-format", "claude", "--progress", "off"}, dir: dir})
	require.Equal(t, 1, o.code, "some sessions fail on purpose\n%s", o.stderr)

	// Group the run's lines by session, and check the subtypes the sessions end with.
	bySession := map[string][]string{}
	var order []string
	subtypes := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(o.stdout, "\n"), "\n") {
		var v struct {
			Type, Subtype, SessionID string `json:",omitempty"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &v), l)
		var ids struct {
			SessionID string `json:"session_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &ids))
		if _, ok := bySession[ids.SessionID]; !ok {
			order = append(order, ids.SessionID)
		}
		bySession[ids.SessionID] = append(bySession[ids.SessionID], l)
		if v.Type == "result" || v.Type == "system" {
			subtypes[v.Type+"/"+v.Subtype] = true
		}
	}
	require.Len(t, bySession, 6, "one session id per session")
	for _, want := range []string{"result/success", "result/error_max_turns", "result/error_during_execution",
		"system/init", "system/task_started", "system/task_notification", "system/api_retry"} {
		assert.True(t, subtypes[want], "a line %s", want)
	}
	assert.Contains(t, o.stdout, `"structured_output":{"answer":42}`)
	assert.Contains(t, o.stdout, `"parent_tool_use_id":"tc_0_0"`, "the sub-agent's lines name its Task call")

	// Replaying each session's events.jsonl writes the same lines.
	events, err := filepath.Glob(filepath.Join(out, "sessions", "*", "events.jsonl"))
	require.NoError(t, err)
	require.Len(t, events, 6)
	for _, ev := range events {
		r := agentrun(t, invocation{args: []string{"replay", "--output-format", "claude", ev}})
		require.Equal(t, 0, r.code, r.stderr)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		var ids struct {
			SessionID string `json:"session_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(lines[0]), &ids))
		assert.Equal(t, bySession[ids.SessionID], lines, "replay of %s", ev)
	}

	var all []sdkLine
	for _, id := range order {
		for i, l := range bySession[id] {
			all = append(all, sdkLine{from: fmt.Sprintf("session %s line %d", id, i+1), json: l})
		}
	}
	goldens, err := filepath.Glob(filepath.Join("..", "..", "sink", "testdata", "TestClaude", "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, goldens)
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		require.NoError(t, err)
		for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			all = append(all, sdkLine{from: fmt.Sprintf("%s line %d", filepath.Base(g), i+1), json: l})
		}
	}
	typeCheckSDK(t, all)
}

// sdkLine is one line to type-check and where it came from.
type sdkLine struct{ from, json string }

// typeCheckSDK fails t with tsc's findings, each named by the line it is about.
func typeCheckSDK(t *testing.T, lines []sdkLine) {
	t.Helper()
	modules := claudeSDK(t)
	dir := t.TempDir()
	var ts strings.Builder
	ts.WriteString("import type { SDKMessage } from '@anthropic-ai/claude-agent-sdk';\n")
	ts.WriteString("type Line = SDKMessage & Record<string, unknown>;\n")
	for i, l := range lines {
		fmt.Fprintf(&ts, "// %s\nexport const line%d: Line = %s;\n", l.from, i, l.json)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "check.ts"), []byte(ts.String()), 0o644))
	tsconfig := map[string]any{
		"compilerOptions": map[string]any{"strict": true, "noEmit": true, "target": "es2022", "module": "nodenext",
			"moduleResolution": "nodenext", "skipLibCheck": true, "types": []string{"node"},
			"typeRoots": []string{filepath.Join(modules, "@types")}},
		"files": []string{"check.ts"},
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tsconfig.json"), mustJSON(t, tsconfig), 0o644))
	// Module resolution walks up from check.ts: link the cached node_modules in.
	require.NoError(t, os.Symlink(modules, filepath.Join(dir, "node_modules")))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(modules, "typescript", "bin", "tsc"), "-p", dir)
	cmd.Dir = dir
	var outb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &outb
	if err := cmd.Run(); err != nil {
		t.Fatalf("the claude format does not type-check against the Claude Agent SDK (%v):\n%s\n(check.ts: see the comment above each line)", err, outb.String())
	}
	t.Logf("%d lines type-check as SDKMessage", len(lines))
}

// claudeSDK returns a node_modules folder holding claudeSDKPackages, installing it into
// the user cache folder the first time. It skips the test when npm is absent.
func claudeSDK(t *testing.T) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: the Claude Agent SDK type check of the claude format needs npm and node")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the Claude Agent SDK type check of the claude format needs npm and node")
	}
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	key := strings.NewReplacer("@", "", "/", "_").Replace(strings.Join(claudeSDKPackages, "+"))
	root := filepath.Join(cache, "agentrun-test", "claude-sdk", key)
	modules := filepath.Join(root, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, ".complete")); err == nil {
		return modules
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(root), 0o755))
	// Install into a fresh folder and rename it into place, so a concurrent or
	// interrupted install never leaves a half-filled cache behind.
	tmp, err := os.MkdirTemp(filepath.Dir(root), ".install-")
	require.NoError(t, err)
	defer func() { _ = os.RemoveAll(tmp) }()
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"name":"agentrun-sdk-check","private":true}`), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{"install", "--omit=optional", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"}, claudeSDKPackages...)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = tmp
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "npm install %s:\n%s", strings.Join(claudeSDKPackages, " "), b)
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "node_modules", ".complete"), nil, 0o644))
	if err := os.Rename(tmp, root); err != nil && !os.IsExist(err) {
		if _, serr := os.Stat(filepath.Join(modules, ".complete")); serr != nil {
			require.NoError(t, err, "move the npm install into the cache")
		}
	}
	return modules
}

// TestEventSchema checks that `agentrun schema --events` prints the published schema,
// and that every event line of exec and of a run of sessions of every outcome, on
// stdout and in stream.jsonl and events.jsonl, matches it.
func TestEventSchema(t *testing.T) {
	t.Parallel()
	o := agentrun(t, invocation{args: []string{"schema", "--events"}})
	require.Equal(t, 0, o.code, o.stderr)
	assert.JSONEq(t, string(eventschema.Schema()), o.stdout)

	src, err := filepath.Abs(filepath.Join("testdata", "TestClaudeSDKTypes"))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	out := filepath.Join(dir, "out")
	r := agentrun(t, invocation{args: []string{"run", "spec.yaml", "--out", out, "--output-format", "stream-json", "--progress", "off"}, dir: dir})
	require.Equal(t, 1, r.code, r.stderr)
	for i, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		assert.NoError(t, eventschema.ValidateLine([]byte(l)), "run stdout line %d", i+1)
	}
	files, err := eventschema.ValidateTree(out)
	require.NoError(t, err)
	assert.Equal(t, 12, files, "a stream.jsonl and an events.jsonl per session")

	ws, env, script := execSetup(t, "steps:\n  - thinking: Hm.\n    text: Look.\n    tool_calls: [{name: Bash, input: {command: 'echo hi'}}]\n  - text: Done.\n")
	e := agentrun(t, invocation{args: []string{"exec", "--script", script, "--output-format", "stream-json", "Go."}, env: env, dir: ws})
	require.Equal(t, 0, e.code, e.stderr)
	for i, l := range strings.Split(strings.TrimSuffix(e.stdout, "\n"), "\n") {
		assert.NoError(t, eventschema.ValidateLine([]byte(l)), "exec stdout line %d", i+1)
	}
	files, err = eventschema.ValidateTree(projectDir(t, env))
	require.NoError(t, err)
	assert.Equal(t, 2, files, "exec's stream.jsonl and events.jsonl, as a session of run has")
}

// TestJSONLogs checks that with --log-format json every line on stderr is a JSON
// object, the per-session progress lines included, with the progress the flags of the
// Kubernetes example ask for.
func TestJSONLogs(t *testing.T) {
	t.Parallel()
	for _, progress := range []string{"plain", "auto", "live"} {
		t.Run(progress, func(t *testing.T) {
			t.Parallel()
			src, err := filepath.Abs(filepath.Join("testdata", "TestClaudeSDKTypes"))
			require.NoError(t, err)
			dir := t.TempDir()
			require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
			require.NoError(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
			o := agentrun(t, invocation{args: []string{"run", "spec.yaml", "--out", "out", "--log-format", "json", "--progress", progress}, dir: dir})
			require.Equal(t, 1, o.code, o.stderr)
			lines := strings.Split(strings.TrimSuffix(o.stderr, "\n"), "\n")
			progressLines := 0
			for i, l := range lines {
				var v struct {
					Level, Msg, Logger string
				}
				require.NoError(t, json.Unmarshal([]byte(l), &v), "stderr line %d is JSON: %q", i+1, l)
				assert.NotEmpty(t, v.Level)
				if v.Logger == "progress" {
					progressLines++
				}
			}
			assert.GreaterOrEqual(t, progressLines, 6, "a line per finished session")
		})
	}
}
