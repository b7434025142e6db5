package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dockerInstruction is one instruction of a Dockerfile, continuation lines joined.
type dockerInstruction struct {
	cmd, args string
}

func readDockerfile(t *testing.T) [][]dockerInstruction {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	require.NoError(t, err)
	var stages [][]dockerInstruction
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd, args, _ := strings.Cut(line, " ")
		in := dockerInstruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], in)
		}
	}
	return stages
}

// TestDockerfile checks the image's recipe: a build stage that makes a static, trimmed,
// versioned binary, and a runtime stage with the agent's tools, a non-root user and
// tini as PID 1 in front of agentrun.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	_ = buildVersion // the -X main.buildVersion target exists
	stages := readDockerfile(t)
	require.GreaterOrEqual(t, len(stages), 2, "multi-stage")
	build, final := stages[0], stages[len(stages)-1]
	require.Regexp(t, `(?i)\sAS\s+build$`, build[0].args)
	var buildRuns []string
	for _, in := range build {
		if in.cmd == "RUN" {
			buildRuns = append(buildRuns, in.args)
		}
	}
	compile := strings.Join(buildRuns, "\n")
	for _, want := range []string{"CGO_ENABLED=0", "go build", "-trimpath", "-X main.buildVersion=", "./cmd/agentrun ./cmd/agentrun-worker"} {
		assert.Contains(t, compile, want)
	}

	var user string
	var entrypoint []string
	var runs, copies []string
	for _, in := range final {
		switch in.cmd {
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			require.NoError(t, json.Unmarshal([]byte(in.args), &entrypoint), "exec form, so signals reach tini")
		case "RUN":
			runs = append(runs, in.args)
		case "COPY":
			copies = append(copies, in.args)
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	assert.NotContains(t, []string{"", "root", "0"}, uid, "the image runs as a non-root user")
	require.GreaterOrEqual(t, len(entrypoint), 3)
	assert.Equal(t, "tini", filepath.Base(entrypoint[0]), "tini is PID 1")
	assert.Contains(t, entrypoint, "--")
	assert.Equal(t, "agentrun", filepath.Base(entrypoint[len(entrypoint)-1]))
	install := regexp.MustCompile(`(apt-get install|apk add)[^&;]*`).FindString(strings.Join(runs, "\n"))
	for _, pkg := range []string{"bash", "git", "ca-certificates", "tini"} {
		assert.Regexp(t, `\s`+regexp.QuoteMeta(pkg)+`(\s|$)`, install, "the runtime image installs %s", pkg)
	}
	assert.True(t, slices.ContainsFunc(copies, func(c string) bool {
		return strings.Contains(c, "--from=build") && strings.Contains(c, "/out/agentrun-worker")
	}), "the worker goes next to agentrun")
}

// dockerIgnored reports whether a .dockerignore pattern excludes path (slash-separated).
func dockerIgnored(patterns []string, path string) bool {
	parts := strings.Split(path, "/")
	for _, p := range patterns {
		p = strings.TrimPrefix(p, "/")
		anyDepth := strings.HasPrefix(p, "**/")
		p = strings.TrimPrefix(p, "**/")
		for start := 0; start < len(parts); start++ {
			if start > 0 && !anyDepth {
				break
			}
			for end := start + 1; end <= len(parts); end++ {
				if ok, _ := filepath.Match(p, strings.Join(parts[start:end], "/")); ok {
					return true
				}
			}
		}
	}
	return false
}

// TestDockerignore checks that the build context leaves out the repository's history
// and keeps every file the binaries (agentrun and agentrun-worker) are built from.
func TestDockerignore(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	require.NoError(t, err)
	var patterns []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			require.False(t, strings.HasPrefix(line, "!"), "the test knows no exceptions: %s", line)
			patterns = append(patterns, line)
		}
	}
	assert.True(t, dockerIgnored(patterns, ".git/HEAD"))
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{range .EmbedFiles}} {{.}}{{end}}{{end}}", ".", "../agentrun-worker").Output()
	require.NoError(t, err)
	root, err := filepath.Abs(repoRoot)
	require.NoError(t, err)
	needed := []string{"go.mod", "go.sum"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		rel, err := filepath.Rel(root, fields[0])
		require.NoError(t, err)
		if strings.HasPrefix(rel, "..") {
			continue // a dependency outside the module
		}
		for _, f := range fields[1:] {
			needed = append(needed, filepath.ToSlash(filepath.Join(rel, f)))
		}
	}
	require.Greater(t, len(needed), 10)
	for _, f := range needed {
		assert.False(t, dockerIgnored(patterns, f), "the build needs %s", f)
	}
}
