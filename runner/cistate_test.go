package runner_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/worker/workertest"
)

// TestCIStateIsHidden plants, where the CI systems keep a job's secrets for its steps,
// the files they write there, in a folder the tools may read: GitHub's $RUNNER_TEMP
// (the running step's script with a secret expanded into it, the workflow commands'
// files, agentrun's own executable beside them, as the action installs it), Azure
// Pipelines' $AGENT_TEMPDIRECTORY (a script, a secure file), GitLab's
// $CI_PROJECT_DIR.tmp (a variable of type file), Buildkite's agent config, agent hooks
// and job environment file, each where its variable says, and Jenkins's $WORKSPACE@tmp
// (a secret file of withCredentials), and TeamCity's build properties and the agent's
// config, which holds its token. A session's tools must read none of them, and its worker
// must still start from its folder in $RUNNER_TEMP, and its run write its output folder
// there.
func TestCIStateIsHidden(t *testing.T) {
	t.Parallel()
	for _, ci := range []struct {
		name  string
		env   func(ci string) []string
		files map[string]string
	}{
		{"github", func(ci string) []string {
			return []string{"GITHUB_ACTIONS=true", "RUNNER_TEMP=" + filepath.Join(ci, "_temp")}
		}, map[string]string{
			"_temp/4b1e3f2a-step.sh":                    "export ANTHROPIC_API_KEY=SECRET\nagentrun run jobs.yaml\n",
			"_temp/_runner_file_commands/set_env_8c2a":  "DEPLOY_TOKEN=SECRET\n",
			"_temp/_runner_file_commands/add_path_8c2a": "/opt/SECRET\n",
			"_temp/git-credentials-77.config":           "[http]\n\textraheader = AUTHORIZATION: basic SECRET\n",
			"_temp/_github_workflow/event.json":         "{\"token\": \"SECRET\"}\n",
			"_temp/agentrun-bin/README":                 "agentrun's own folder\n",
		}},
		{"azure", func(ci string) []string {
			return []string{"TF_BUILD=True", "AGENT_TEMPDIRECTORY=" + filepath.Join(ci, "_temp")}
		}, map[string]string{
			"_temp/9d4c-inline.sh":      "export API_KEY=SECRET\n",
			"_temp/signing.p12":         "SECRET\n",
			"_temp/.taskkey":            "SECRET\n",
			"_temp/sub/deeper/notes.md": "SECRET\n",
		}},
		{"gitlab", func(ci string) []string {
			return []string{"GITLAB_CI=true", "CI_PROJECT_DIR=" + filepath.Join(ci, "project")}
		}, map[string]string{"project.tmp/KUBECONFIG": "token: SECRET\n", "project/README": "the checkout\n"}},
		{"buildkite", func(ci string) []string {
			return []string{"BUILDKITE=true", "BUILDKITE_CONFIG_PATH=" + filepath.Join(ci, "agent", "buildkite-agent.cfg"),
				"BUILDKITE_HOOKS_PATH=" + filepath.Join(ci, "agent", "hooks"), "BUILDKITE_ENV_FILE=" + filepath.Join(ci, "job-env-0a1b")}
		}, map[string]string{
			"agent/buildkite-agent.cfg": "token=\"SECRET\"\n",
			"agent/hooks/environment":   "export NPM_TOKEN=SECRET\n",
			"job-env-0a1b":              "DEPLOY_KEY=\"SECRET\"\n",
		}},
		{"jenkins", func(ci string) []string {
			return []string{"JENKINS_URL=https://jenkins.example.com/", "WORKSPACE=" + filepath.Join(ci, "ws")}
		}, map[string]string{"ws@tmp/secretFiles/0f3c/deploy-key": "SECRET\n", "ws/README": "the checkout\n"}},
		{"teamcity", func(ci string) []string {
			return []string{"TEAMCITY_VERSION=2025.07 (build 196783)",
				"TEAMCITY_BUILD_PROPERTIES_FILE=" + filepath.Join(ci, "agent-temp", "buildTmp", "teamcity.build4815.properties")}
		}, map[string]string{
			// The agent's temporary folder is not in its home here (tempDir= of its
			// config), so that the home is found from the build's properties.
			"agent/conf/buildAgent.properties":                   "serverUrl=https\\://tc.example.com\nauthorizationToken=SECRET\n",
			"agent-temp/buildTmp/teamcity.build4815.properties":  "#TeamCity build properties\nagent.home.dir=ROOT/agent\nteamcity.auth.password=SECRET\n",
			"agent-temp/buildTmp/teamcity.config1623.properties": "deploy.password=SECRET\n",
			"agent-temp/buildTmp/teamcity.runner42.properties":   "secure\\:password=SECRET\n",
		}},
	} {
		t.Run(ci.name, func(t *testing.T) {
			t.Parallel()
			confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
				secret := "ci-secret-" + strconv.FormatInt(time.Now().UnixNano(), 36)
				root, src, out := filepath.Join(dir, "ci"), filepath.Join(dir, "src"), filepath.Join(dir, "out")
				for name, content := range ci.files {
					p := filepath.Join(root, name)
					require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
					content = strings.NewReplacer("SECRET", secret, "ROOT", root).Replace(content)
					require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
				}
				opts := runner.Options{Out: out, Environ: append(os.Environ(), ci.env(root)...)}
				if ci.name == "github" {
					// The action installs agentrun in $RUNNER_TEMP/agentrun-bin, and a
					// shared workspace's output folder may go there too.
					opts.Sandbox.Binary = copyExecutable(t, workertest.Bin(t), filepath.Join(root, "_temp", "agentrun-bin"))
					out = filepath.Join(root, "_temp", "agentrun-out")
					opts.Out = out
				}
				if ci.name == "teamcity" {
					// The agent gives a build's processes its buildTmp as TMPDIR.
					opts.Sandbox.TempDir = filepath.Join(root, "agent-temp", "buildTmp")
				}
				require.NoError(t, os.MkdirAll(src, 0o755))
				scripts := scriptsWith(t, "peek", "steps:\n  - tool_calls: [{name: Bash, input: {command: \"grep -r ci-secret "+root+"; ls "+root+"; echo ok > ${TMPDIR:-/tmp}/probe && cat ${TMPDIR:-/tmp}/probe && echo read\"}}]\n  - text: \"Peeked.\"\n")
				opts.Providers = newInProcess(scripts)
				spec := fmt.Sprintf("version: 1\ndefaults: {tools: [Bash], bash_mode: \"0467\", env: {PATH: /usr/bin:/bin}, "+
					"sandbox: {level: %s, readable: [%s]}}\njobs:\n  - {id: peek, model: peek, prompt: Peek.}\n", level, root)
				_, err := newRunner(t, opts).Run(context.Background(), writeSpec(t, src, spec))
				require.NoError(t, err)
				results := toolResults(t, out, "peek")
				require.Len(t, results, 1)
				assert.NotContains(t, results[0].Content, secret, "LEAK: %s", results[0].Content)
				assert.Contains(t, results[0].Content, "read", "the tool did not run")
				for _, p := range artifactFiles(t, out) {
					assert.NotContains(t, readFile(t, p), secret, "LEAK in %s", p)
				}
			})
		})
	}
}

// copyExecutable copies the executable src into folder dir and returns the copy.
func copyExecutable(t *testing.T, src, dir string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	in, err := os.Open(src)
	require.NoError(t, err)
	defer func() { _ = in.Close() }()
	dst := filepath.Join(dir, filepath.Base(src))
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
	return dst
}
