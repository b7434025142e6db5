package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// The deployment files (action.yml, examples/github, examples/kubernetes, Dockerfile)
// are checked against the command line they drive: every `agentrun SUB --flag` they
// contain must name a subcommand and flags that `agentrun SUB --help` lists.

// repoRoot is the repository's root, seen from this package's folder.
const repoRoot = "../.."

// actionMeta is action.yml.
type actionMeta struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Inputs      map[string]struct {
		Description string `yaml:"description"`
		Required    bool   `yaml:"required"`
		Default     string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string         `yaml:"using"`
		Steps []workflowStep `yaml:"steps"`
	} `yaml:"runs"`
}

// workflowStep is a step of a workflow job or of a composite action.
type workflowStep struct {
	ID    string            `yaml:"id"`
	Name  string            `yaml:"name"`
	If    string            `yaml:"if"`
	Uses  string            `yaml:"uses"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	With  map[string]string `yaml:"with"`
	Env   map[string]string `yaml:"env"`
}

// workflow is a GitHub Actions workflow file.
type workflow struct {
	Name string `yaml:"name"`
	// On is kept as a node: triggers without settings have null values.
	On          yaml.Node         `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Concurrency *struct {
		Group            string `yaml:"group"`
		CancelInProgress *bool  `yaml:"cancel-in-progress"`
	} `yaml:"concurrency"`
	Jobs map[string]struct {
		TimeoutMinutes int `yaml:"timeout-minutes"`
		Strategy       *struct {
			FailFast *bool            `yaml:"fail-fast"`
			Matrix   map[string][]int `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []workflowStep `yaml:"steps"`
	} `yaml:"jobs"`
}

// workflowTriggers are the settings of a workflow's triggers that the tests read.
type workflowTriggers struct {
	Schedule         []struct{ Cron string } `yaml:"schedule"`
	WorkflowDispatch *dispatchTrigger        `yaml:"workflow_dispatch"`
}

// dispatchTrigger is workflow_dispatch: the inputs of a manual run.
type dispatchTrigger struct {
	Inputs map[string]struct {
		Description string `yaml:"description"`
	} `yaml:"inputs"`
}

// triggers returns the names of w's triggers and their settings.
func (w workflow) triggers(t *testing.T) (map[string]bool, workflowTriggers) {
	t.Helper()
	names := map[string]bool{}
	var tr workflowTriggers
	switch w.On.Kind {
	case yaml.ScalarNode:
		names[w.On.Value] = true
	case yaml.SequenceNode:
		for _, n := range w.On.Content {
			names[n.Value] = true
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(w.On.Content); i += 2 {
			names[w.On.Content[i].Value] = true
		}
		require.NoError(t, w.On.Decode(&tr))
		if names["workflow_dispatch"] && tr.WorkflowDispatch == nil {
			tr.WorkflowDispatch = &dispatchTrigger{}
		}
	default:
		t.Fatalf("the workflow's on: is neither a name, a list nor a mapping (yaml kind %v)", w.On.Kind)
	}
	return names, tr
}

// deployInvocation is one `agentrun SUB --flag…` found in a deployment file.
type deployInvocation struct {
	where string
	sub   string
	flags []string
}

var (
	// shellInvocation finds `agentrun SUB args` in shell text, up to a shell operator.
	shellInvocation = regexp.MustCompile(`(?:^|[\s;&|(])agentrun\s+([a-z][a-z-]*)([^;&|)#\n]*)`)
	// bashArray finds array assignments such as flags=(--out "$OUT") or flags+=(…).
	bashArray = regexp.MustCompile(`\w+\+?=\(([^)]*)\)`)
	// shellComment is a comment: from a # that starts a word to the end of the line.
	shellComment = regexp.MustCompile(`(?m)(^|\s)#.*$`)
	flagToken    = regexp.MustCompile(`(?:^|[\s"'(])--([a-z][a-z0-9-]*)`)
	helpFlag     = regexp.MustCompile(`^\s+--([a-z][a-z0-9-]*)\b`)
	// pinned is an action reference pinned to a commit or at least a version tag.
	pinned       = regexp.MustCompile(`^[\w.-]+/[\w.-]+(/[\w./-]+)?@([0-9a-f]{40}|v\d+(\.\d+){0,2})$`)
	stepOutput   = regexp.MustCompile(`steps\.([\w-]+)\.outputs\.([\w-]+)`)
	inputRef     = regexp.MustCompile(`\binputs\.([\w-]+)`)
	echoedOutput = regexp.MustCompile(`echo "([\w-]+)=[^"]*" >> "\$GITHUB_OUTPUT"`)
)

func flagNames(s string) []string {
	var out []string
	for _, m := range flagToken.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// shellInvocations returns the agentrun commands of a shell script. When the script
// runs agentrun once, the flags in its array assignments belong to that command.
func shellInvocations(where, script string) []deployInvocation {
	script = shellComment.ReplaceAllString(strings.ReplaceAll(script, "\\\n", " "), "")
	var out []deployInvocation
	for _, m := range shellInvocation.FindAllStringSubmatch(script, -1) {
		out = append(out, deployInvocation{where: where, sub: m[1], flags: flagNames(m[2])})
	}
	if len(out) == 1 {
		for _, m := range bashArray.FindAllStringSubmatch(script, -1) {
			out[0].flags = append(out[0].flags, flagNames(m[1])...)
		}
	}
	return out
}

// commandFlags returns the flags `agentrun sub --help` lists, from the in-process App;
// it fails the test when sub is not a subcommand.
func commandFlags(t *testing.T, sub string) map[string]bool {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := (&App{Stdout: &stdout, Stderr: &stderr}).Main(context.Background(), []string{sub, "--help"})
	require.Equal(t, exitOK, code, "agentrun %s --help: %s", sub, stderr.String())
	flags := map[string]bool{"help": true}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if m := helpFlag.FindStringSubmatch(line); m != nil {
			flags[m[1]] = true
		}
	}
	return flags
}

// checkInvocations checks each command against the command line's help.
func checkInvocations(t *testing.T, invs []deployInvocation) {
	t.Helper()
	for _, inv := range invs {
		known := commandFlags(t, inv.sub)
		for _, f := range inv.flags {
			assert.True(t, known[f], "%s: agentrun %s has no flag --%s", inv.where, inv.sub, f)
		}
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, v), path)
}

func loadAction(t *testing.T) actionMeta {
	t.Helper()
	var a actionMeta
	readYAML(t, filepath.Join(repoRoot, "action.yml"), &a)
	return a
}

// isAgentrunAction reports whether a step uses this repository's action.
func isAgentrunAction(uses string) bool {
	return uses == "./" || strings.HasPrefix(uses, "agentrun/agentrun@")
}

// runnerOutputs are the step outputs agentrun writes itself, found by running it with
// GITHUB_ACTIONS set and reading $GITHUB_OUTPUT back.
func runnerOutputs(t *testing.T, wantCode int, args ...string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	spec := filepath.Join(dir, "jobs.yaml")
	require.NoError(t, os.WriteFile(spec, []byte(deploySpec), 0o644))
	output := filepath.Join(dir, "output")
	var stdout, stderr bytes.Buffer
	app := &App{Stdout: &stdout, Stderr: &stderr, Env: []string{"HOME=" + dir, "GITHUB_ACTIONS=true",
		"GITHUB_OUTPUT=" + output, "PATH=" + os.Getenv("PATH")}}
	code := app.Main(context.Background(), append([]string{"run", spec, "--out", filepath.Join(dir, "out"), "--progress", "off"}, args...))
	require.Equal(t, wantCode, code, "stderr: %s", stderr.String())
	return parseOutputs(t, output)
}

// parseOutputs reads an environment file the way the Actions runner does.
func parseOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	out := map[string]string{}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		eq, doc := strings.Index(line, "="), strings.Index(line, "<<")
		switch {
		case line == "":
		case eq >= 0 && (doc < 0 || eq < doc):
			out[line[:eq]] = line[eq+1:]
		default:
			require.Positive(t, doc, "bad line %q", line)
			name, delim, start := line[:doc], line[doc+2:], i+1
			for i++; i < len(lines) && lines[i] != delim; i++ {
			}
			require.Less(t, i, len(lines), "no closing delimiter for %s", name)
			out[name] = strings.Join(lines[start:i], "\n")
		}
	}
	return out
}

// deploySpec has four sessions on the built-in scripted model; broken fails its check.
const deploySpec = `version: 1
concurrency: 2
defaults: {tools: [Read], max_turns: 4, timeout: 1m}
jobs:
  - {id: broken, prompt: Say anything., checks: [{name: fails, run: "exit 1"}]}
  - {id: fix-one, prompt: Say one.}
  - {id: fix-two, prompt: Say two.}
  - {id: other, prompt: Say three.}
`
