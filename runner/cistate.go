package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agentrun/agentrun/pathname"
)

// ciState lists the files in which the CI system that runs agentrun keeps the job's
// secrets for its steps, which no tool may see. environ is the runner's environment,
// exe the worker's executable, which stays visible; parent is the process whose
// ancestors are looked at for GitHub's runner.
//
//   - GitHub Actions: every entry of $RUNNER_TEMP but the one that holds exe. The
//     runner writes each step's script there with its expressions expanded (a
//     `ANTHROPIC_API_KEY=${{ secrets.KEY }} agentrun run …` holds the key), the files
//     of the workflow commands ($GITHUB_ENV, $GITHUB_PATH: written, they reach every
//     later step unconfined), actions/checkout's credentials and SSH key. Also the
//     registration of a self-hosted runner (its RSA key, with which one can take the
//     runner's next jobs and their secrets) and its logs, in the folder it is
//     installed in; of Gitea's and Forgejo's runners, which act as GitHub's, their
//     registration (runnerFiles).
//   - Azure Pipelines, whose agent GitHub's runner was made from: the same of
//     $AGENT_TEMPDIRECTORY (scripts with their $(secret)s expanded, secure files)
//     and of the agent's install folder.
//   - GitLab CI: $CI_PROJECT_DIR.tmp, where the runner writes the job's variables of
//     type file (a kubeconfig, a cloud's key) and its CA files.
//   - Buildkite: the agent's config ($BUILDKITE_CONFIG_PATH), which holds its token,
//     its hooks ($BUILDKITE_HOOKS_PATH), whose environment hook is where its docs put
//     the secrets every job gets, and the job's environment as the agent wrote it
//     ($BUILDKITE_ENV_FILE).
//   - Jenkins: $WORKSPACE@tmp, where withCredentials writes its secret files and
//     SSH keys.
//   - TeamCity: the build's temporary folder and the agent's config (teamcityState).
func ciState(environ []string, exe string, parent int) []string {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	var out []string
	github, azure := env["GITHUB_ACTIONS"] == "true", strings.EqualFold(env["TF_BUILD"], "true")
	for _, temp := range []struct {
		on   bool
		path string
	}{{github, env["RUNNER_TEMP"]}, {azure, env["AGENT_TEMPDIRECTORY"]}} {
		if temp.on && filepath.IsAbs(temp.path) {
			out = append(out, entriesBut(temp.path, pathname.Real(exe))...)
		}
	}
	if github || azure {
		out = append(out, runnerFiles(parent)...)
	}
	if dir := env["CI_PROJECT_DIR"]; env["GITLAB_CI"] == "true" && filepath.IsAbs(dir) {
		out = append(out, filepath.Clean(dir)+".tmp")
	}
	if env["BUILDKITE"] == "true" {
		for _, k := range []string{"BUILDKITE_CONFIG_PATH", "BUILDKITE_HOOKS_PATH", "BUILDKITE_ENV_FILE"} {
			if p := env[k]; filepath.IsAbs(p) {
				out = append(out, filepath.Clean(p))
			}
		}
	}
	if ws := env["WORKSPACE"]; env["JENKINS_URL"] != "" && filepath.IsAbs(ws) {
		out = append(out, filepath.Clean(ws)+"@tmp")
	}
	if env["TEAMCITY_VERSION"] != "" {
		out = append(out, teamcityState(env["TEAMCITY_BUILD_PROPERTIES_FILE"], exe)...)
	}
	return out
}

// teamcityState lists what the tools of a TeamCity build, whose build properties are
// the file props, must not see: every entry of the build's temporary folder, which
// holds that file, but the one on the way to exe (the properties of the build, of its
// configuration and of its runner hold the values of its password parameters and the
// build's own credentials for the server, teamcity.auth.password), and the agent's
// config, which holds the token the agent is known to the server by
// (authorizationToken): conf/buildAgent.properties in the agent's home, which the
// build's properties name (agent.home.dir) and which by default holds the temporary
// folder as temp/buildTmp.
func teamcityState(props, exe string) []string {
	if !filepath.IsAbs(props) {
		return nil
	}
	props = filepath.Clean(props)
	tmp := filepath.Dir(props)
	home := filepath.Dir(filepath.Dir(tmp))
	if b, err := os.ReadFile(props); err == nil {
		if h, ok := javaProperty(b, "agent.home.dir"); ok && filepath.IsAbs(h) {
			home = filepath.Clean(h)
		}
	}
	return append(entriesBut(tmp, pathname.Real(exe)), filepath.Join(home, "conf", "buildAgent.properties"))
}

// runnerState are the files of a GitHub Actions runner's or an Azure Pipelines agent's
// install folder that the tools must not see: its registration and credentials, its
// environment and its logs.
var runnerState = []string{".runner", ".agent", ".credentials", ".credentials_rsaparams", ".credentials_migrated",
	".credentials_rsaparams_migrated", ".env", ".path", ".service", "_diag"}

// entriesBut lists the entries of folder dir but the one on the way to keep.
func entriesBut(dir, keep string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	real := pathname.Real(dir)
	var out []string
	for _, e := range entries {
		if pathname.Within(filepath.Join(real, e.Name()), keep) {
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out
}

// runnerFiles finds the self-hosted runner that runs the job's steps from the
// executable of pid or of one of its ancestors, and lists the files of its state that
// the tools must not see:
//   - of GitHub's runner or Azure's agent (bin/Runner.Worker or bin/Agent.Worker, which
//     runs the steps, or their Listener), runnerState in the folder it is installed in;
//   - of Gitea's act_runner or Forgejo's runner, which run a job's steps on their host
//     in the host mode and act as GitHub's, the registration (.runner, with the token
//     that takes the runner's next jobs and their secrets) in the folder it runs in.
func runnerFiles(pid int) []string {
	for range 32 {
		if pid <= 1 {
			return nil
		}
		proc := "/proc/" + strconv.Itoa(pid)
		exe, err := os.Readlink(proc + "/exe")
		switch base := filepath.Base(exe); {
		case err != nil:
		case slices.Contains(runnerExecutables, base):
			install := filepath.Dir(filepath.Dir(exe))
			out := make([]string, len(runnerState))
			for i, name := range runnerState {
				out[i] = filepath.Join(install, name)
			}
			return out
		case slices.Contains(actRunners, base):
			if cwd, err := os.Readlink(proc + "/cwd"); err == nil && filepath.IsAbs(cwd) {
				return []string{filepath.Join(cwd, ".runner")}
			}
			return nil
		}
		if pid = parentOf(pid); pid < 0 {
			return nil
		}
	}
	return nil
}

// runnerExecutables are the names of the processes of GitHub's runner and Azure's
// agent; actRunners those of Gitea's and Forgejo's runners.
var (
	runnerExecutables = []string{"Runner.Worker", "Runner.Listener", "Agent.Worker", "Agent.Listener"}
	actRunners        = []string{"act_runner", "forgejo-runner", "gitea-runner"}
)

// parentOf reads the parent of process pid from /proc; -1 when it cannot.
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	return parseParent(b)
}

// parseParent reads the parent's pid from a /proc/PID/stat; -1 when it has none.
func parseParent(b []byte) int {
	// pid (comm) state ppid …: comm may hold spaces and parentheses, so the fields
	// start after the last ")".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil || ppid < 0 {
		return -1
	}
	return ppid
}
