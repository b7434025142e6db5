package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agentrun/agentrun/pathname"
)

// Perm is one octal digit of a bash_mode: read=4, write=2, execute=1.
type Perm uint8

// The bits of a Perm.
const (
	PermExecute Perm = 1
	PermWrite   Perm = 2
	PermRead    Perm = 4
)

// Has reports whether p holds every bit of q.
func (p Perm) Has(q Perm) bool { return p&q == q }

// Mode is a bash_mode's four digits: system, external, network, workspace.
type Mode struct {
	System, External, Network, Workspace Perm
}

// ParseMode parses a bash_mode such as "0467".
func ParseMode(s string) (Mode, error) {
	if len(s) != 4 {
		return Mode{}, fmt.Errorf("bash_mode %q: want four octal digits such as \"0467\"", s)
	}
	n, err := strconv.ParseUint(s, 8, 16)
	if err != nil {
		return Mode{}, fmt.Errorf("bash_mode %q: want four octal digits such as \"0467\"", s)
	}
	return Mode{System: Perm(n >> 9 & 7), External: Perm(n >> 6 & 7), Network: Perm(n >> 3 & 7), Workspace: Perm(n & 7)}, nil
}

// String returns the four digits.
func (m Mode) String() string {
	return fmt.Sprintf("%d%d%d%d", m.System, m.External, m.Network, m.Workspace)
}

// Spec is what one session's worker may touch. Paths are absolute and clean.
type Spec struct {
	Level Level
	Mode  Mode
	// Workspace is the session's working directory.
	Workspace string
	// Home is the user's home directory as tools see it ($HOME).
	Home string
	// AccountHome is the home of the account the runner runs as, from the password
	// database, where it is not Home ($HOME unset, or a CI system's folder): its
	// credential stores are hidden as Home's are.
	AccountHome string
	// Writable and Readable are the spec's extra paths (sandbox.writable/readable).
	Writable, Readable []string
	// Caches are the spec's caches (sandbox.caches), and CacheDir the session's
	// folder on the host for the layers its tools write over them (level strict):
	// cache i is an overlay whose upper layer is CacheDir/i. Without CacheDir a cache
	// is writable, as a writable path is.
	Caches   []string
	CacheDir string
	// External are the host's top-level directories of the external scope, as
	// ExternalDirs lists them on the host (the worker builds its root where it can no
	// longer look).
	External []string
	// TempDir is a private scratch directory of the session on the host, used as
	// TMPDIR where /tmp cannot be private (level landlock).
	TempDir string
	// Scratch is the size in bytes of the session's scratch space at level strict: one
	// tmpfs, in memory, that holds its private /tmp, /dev/shm and, where the home
	// directory is not bound, the home directory. Zero is DefaultScratch.
	Scratch uint64
	// RootOnly and Credentials are more host paths hidden with the machine's
	// credentials unless the system read bit is set: what the host lets nobody but
	// root read (RootOnly), but for what holds or lies in the session's own folders,
	// and the files the runner found holding credentials (the git configs of a
	// checkout's). Hidden reads them on the host; the worker gets its result, not them.
	RootOnly    []string `json:"-"`
	Credentials []string `json:"-"`
	// Memory is the session's memory limit in bytes, its processes' and its scratch
	// space's together, held by its cgroup where one is writable (LayerMemory). Zero is
	// DefaultMemory (MemoryLimit).
	Memory uint64
	// Proxied says that the runner serves the network proxy of level strict: on a
	// loopback listener that the worker makes inside the sandbox's network namespace
	// and hands over. False when the network digit is 0.
	Proxied bool
}

// Network reports whether tools may reach the network (through the proxy).
func (s Spec) Network() bool { return s.Mode.Network != 0 && s.Proxied }

// runtimeDirs hold the programs and libraries every command needs; they are always
// readable and executable, whatever the system digit says, and writable only with the
// system write bit.
var runtimeDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// systemDirs are the rest of the system scope: visible only with the system read bit.
var systemDirs = []string{"/var", "/boot", "/srv", "/snap"}

// virtualDirs are never taken from the host: the sandbox makes its own.
var virtualDirs = []string{"/proc", "/sys", "/dev", "/tmp", "/run", "/var/run", "/lost+found"}

// maskedFiles are hidden (absent, or in a writable folder empty) unless the system
// read bit is set: credentials of the machine.
var maskedFiles = []string{
	"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
	"/etc/ssh", "/etc/ssl/private", "/etc/machine-id",
	// Self-hosted CI agents' registrations, with which one takes the agent's next jobs
	// and their secrets (Buildkite's, CircleCI's machine runner's, its launch agent's
	// before version 3, GitLab Runner's, Drone's exec runner's), and Buildkite's agent
	// hooks, whose environment hook is where its docs put the secrets every job gets.
	// The agent reads them as the user that runs the jobs, so its modes let them be read.
	"/etc/buildkite-agent/buildkite-agent.cfg", "/etc/buildkite-agent/hooks",
	"/etc/circleci-runner/circleci-runner-config.yaml", "/opt/circleci/launch-agent-config.yaml",
	"/etc/gitlab-runner/config.toml", "/etc/drone-runner-exec/config",
}

// sensitiveHome are the credential stores under $HOME, hidden unless the system read
// bit is set (the safety policy counts them as system scope).
var sensitiveHome = []string{
	".ssh", ".gnupg", ".aws", ".docker", ".kube", ".azure", ".netrc", ".git-credentials",
	".npmrc", ".pypirc", ".config/gcloud", ".config/gh", ".config/hub", ".password-store",
	".local/share/keyrings", ".agentrun",
	// Other agents' CLIs, which a machine that runs agentrun often runs too: Claude
	// Code's login (and its settings, which hold MCP servers' environments), Codex's,
	// Gemini CLI's and GitHub Copilot's.
	".claude/.credentials.json", ".claude.json", ".codex/auth.json", ".gemini/oauth_creds.json",
	".config/github-copilot",
	// Registries', databases' and clouds' tokens and passwords.
	".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".vault-token",
	".terraform.d/credentials.tfrc.json", ".pulumi/credentials.json", ".m2/settings-security.xml",
	".pgpass", ".my.cnf", ".s3cfg", ".boto", ".oci", ".config/doctl", ".fly", ".config/rclone",
	// Browser profiles: cookies of logged-in sessions and saved passwords.
	".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".config/microsoft-edge",
	// Build tools' and package managers' user configs, which hold registries' passwords
	// as they are (a project's own config in the workspace stays the project's); model
	// hubs', data platforms' and hosting CLIs' tokens; private keys.
	".gradle/gradle.properties", ".m2/settings.xml", ".composer/auth.json", ".config/composer/auth.json",
	".nuget/NuGet/NuGet.Config", ".bundle/config", ".yarnrc.yml", ".config/containers/auth.json",
	".config/helm/repositories.yaml", ".terraformrc", ".config/hcloud", ".config/netlify", ".wrangler/config",
	".config/.wrangler/config", ".databrickscfg", ".kaggle", ".cache/huggingface/token", ".huggingface/token",
	".ollama/id_ed25519", ".config/sops",
	// Forges' and services' CLIs (GitLab's, Gitea's, JFrog's, Stripe's, Vercel's,
	// Supabase's, Firebase's, CircleCI's, Sentry's, ngrok's, 1Password's, Railway's).
	".config/glab-cli", ".config/tea", ".jfrog", ".config/stripe", ".local/share/com.vercel.cli", ".supabase",
	".config/configstore/firebase-tools.json", ".circleci/cli.yml", ".sentryclirc", ".config/ngrok", ".config/op",
	".railway",
	// Shells' and REPLs' histories, where a token typed once stays.
	".bash_history", ".zsh_history", ".history", ".sh_history", ".python_history", ".psql_history", ".mysql_history",
	".sqlite_history", ".node_repl_history", ".rediscli_history", ".local/share/fish/fish_history",
	// Clusters' and access proxies' client keys and certificates: minikube's, Talos's,
	// Teleport's, smallstep's.
	".minikube", ".talos", ".tsh", ".step",
	// Shells' startup files and the session environment's (systemd's, PAM's), where a
	// developer exports the API keys every shell gets; the tools' non-interactive bash
	// reads none of them.
	".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin",
	".config/fish/config.fish", ".config/fish/conf.d", ".config/environment.d", ".pam_environment",
	// The same CI agents installed in the user's home.
	".buildkite-agent/buildkite-agent.cfg", ".buildkite-agent/hooks", ".gitlab-runner/config.toml",
	".drone-runner-exec/config",
	// Other AI tools' keys (llm's, opencode's, aichat's, aider's, Continue's, Qwen
	// Code's, goose's), data warehouses', more clouds' and secret managers' CLIs, and
	// a synced shell history (atuin's, with its key).
	".config/io.datasette.llm/keys.json", ".local/share/opencode/auth.json", ".config/aichat/config.yaml",
	".aider.conf.yml", ".continue/config.json", ".continue/config.yaml", ".qwen/oauth_creds.json",
	".config/goose/secrets.yaml", ".dbt/profiles.yml", ".snowflake", ".config/openstack/clouds.yaml",
	".config/openstack/secure.yaml", ".config/scw", ".config/linode-cli", ".aliyun", ".bluemix", ".doppler",
	".infisical", ".twilio-cli", ".config/configstore/snyk.json", ".local/share/atuin",
}

// Hidden returns the host paths the sandbox masks: machine credentials and the
// credential stores in the home directories ($HOME's and the account's), plus extra
// (the runner's own state, such as its output and home directories). Each is there
// also as the host resolves it, where a symbolic link is on its way ($HOME a link, as
// /home is to /var/home on Fedora's atomic desktops, or ~/.ssh a link to where the keys
// are): the sandbox hides paths, and the tools may take either way. It must run on the
// host.
func (s Spec) Hidden(extra ...string) []string {
	var out []string
	if !s.Mode.System.Has(PermRead) {
		out = append(slices.Clone(maskedFiles), s.Credentials...)
		for _, p := range s.RootOnly {
			if !s.holdsOwn(p) {
				out = append(out, p)
			}
		}
		for _, home := range slices.Compact([]string{s.Home, s.AccountHome}) {
			if home == "" || home == "/" {
				continue
			}
			for _, h := range sensitiveHome {
				out = append(out, filepath.Join(home, h))
			}
		}
	}
	out = append(out, extra...)
	seen := make(map[string]bool, 2*len(out))
	for _, p := range out {
		seen[p] = true
	}
	// A folder's resolved form, "" where it has none; the forms appended below are not
	// ranged over again.
	dirs := map[string]string{}
	for _, p := range out {
		for _, r := range resolvedForms(p, dirs) {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// holdsOwn reports whether path p is in one of the session's own folders (its home,
// its workspace, its writable and readable paths, its TMPDIR), is one, or holds one: a
// root-only folder on their way (a private home the workspace is in) is not hidden
// whole, and what a root runner keeps private in its own home is its tools' as it is
// any other user's (its credential stores are hidden as such).
func (s Spec) holdsOwn(p string) bool {
	for _, own := range slices.Concat([]string{s.Home, s.Workspace, s.TempDir}, s.Writable, s.Readable, s.Caches) {
		if own != "" && own != "/" && (pathname.Within(p, own) || pathname.Within(own, p)) {
			return true
		}
	}
	return false
}

// resolvedForms are the other paths that name p on the host: with the links of its
// folder resolved, and p itself resolved where it is a link. dirs holds the paths
// resolved so far (many hidden paths share their folders), and gets p's.
func resolvedForms(p string, dirs map[string]string) []string {
	var out []string
	if dir := resolvedDir(filepath.Dir(p), dirs); dir != "" {
		if r := filepath.Join(dir, filepath.Base(p)); r != p {
			out = append(out, r)
		}
	}
	// Where p is there and no link, this is the form above.
	if r := resolvedDir(p, dirs); r != "" && r != p && !slices.Contains(out, r) {
		out = append(out, r)
	}
	return out
}

// resolvedDir is path dir (a folder, or a hidden path itself) with its links resolved,
// "" where it is not there: one Lstat by way of its parent's resolved form, which dirs
// holds or gets (hidden paths share most of their folders' ways).
func resolvedDir(dir string, dirs map[string]string) string {
	if r, ok := dirs[dir]; ok {
		return r
	}
	r := dir // the root
	if parent := filepath.Dir(dir); parent != dir {
		r = ""
		if up := resolvedDir(parent, dirs); up != "" {
			p := filepath.Join(up, filepath.Base(dir))
			if fi, err := os.Lstat(p); err == nil {
				r = p
				if fi.Mode()&os.ModeSymlink != 0 {
					r, _ = filepath.EvalSymlinks(p) // "" where it leads nowhere
				}
			}
		}
	}
	dirs[dir] = r
	return r
}

// HiddenInWritable returns the first of hidden that exists inside a folder the tools
// may write (the workspace or a writable path), with that folder. Level landlock, which
// grants by folder and cannot take a path out of a grant, hides such a path only by
// taking from the tools the rights of every folder on its way, the writable one's
// included (see carve).
func (s Spec) HiddenInWritable(hidden []string) (path, folder string, ok bool) {
	for _, b := range s.Binds() {
		if !b.Write {
			continue
		}
		if h, ok := existingBelow(b.Path, hidden); ok {
			return h, b.Path, true
		}
	}
	return "", "", false
}

// existingBelow returns the first of hidden that lies below folder dir (not dir
// itself) and exists.
func existingBelow(dir string, hidden []string) (string, bool) {
	for _, h := range hidden {
		if below(dir, h) && exists(h) {
			return h, true
		}
	}
	return "", false
}

// below reports whether path p lies below folder dir, not at it.
func below(dir, p string) bool { return p != dir && pathname.Within(dir, p) }

// exists reports whether path is there (a link counts, wherever it leads).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// WithLinkTargets returns s with, next to each writable or readable path that is or
// passes through a symbolic link, the host path it resolves to, with the same rights.
// Level strict rebuilds the link in its own root and landlock gives links no rule, so
// without its target a link leads nowhere, or to a private /tmp where a target under
// the host's /tmp is not. It must run on the host, before the worker builds its root.
func (s Spec) WithLinkTargets() Spec {
	s.Writable, s.Readable, s.Caches = withTargets(s.Writable), withTargets(s.Readable), withTargets(s.Caches)
	return s
}

func withTargets(paths []string) []string {
	out := slices.Clone(paths)
	for _, p := range paths {
		if real, err := filepath.EvalSymlinks(p); err == nil && real != p && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out
}

// Bind is one host path made visible in the sandbox.
type Bind struct {
	Path     string
	Write    bool
	Exec     bool
	Optional bool // a path that may not exist
	// Upper, for a cache at level strict, is the host folder of the layer the tools
	// write over the path, which stays as it is.
	Upper string
}

// Binds returns the host paths visible to the worker, parents before children, and the
// paths to hide on top of them. It is the one description of the filesystem that both
// the mount namespace and the Landlock rules are built from.
func (s Spec) Binds() []Bind {
	var b []Bind
	sysW := s.Mode.System.Has(PermWrite)
	for _, d := range runtimeDirs {
		b = append(b, Bind{Path: d, Write: sysW, Exec: true, Optional: true})
	}
	if s.Mode.System.Has(PermRead) {
		for _, d := range systemDirs {
			b = append(b, Bind{Path: d, Write: sysW, Exec: s.Mode.System.Has(PermExecute), Optional: true})
		}
	}
	if s.Mode.External.Has(PermRead) {
		for _, d := range s.External {
			b = append(b, Bind{Path: d, Write: s.Mode.External.Has(PermWrite), Exec: s.Mode.External.Has(PermExecute), Optional: true})
		}
	}
	// Without external read the home directory is an empty private folder at level
	// strict (see makeScratch) and has no rule at level landlock.
	for _, r := range s.Readable {
		b = append(b, Bind{Path: r, Exec: true, Optional: true})
	}
	if s.Workspace != "" {
		b = append(b, Bind{Path: s.Workspace, Write: s.Mode.Workspace.Has(PermWrite), Exec: s.Mode.Workspace.Has(PermExecute)})
	}
	for _, w := range s.Writable {
		b = append(b, Bind{Path: w, Write: true, Exec: true, Optional: true})
	}
	for i, c := range s.Caches {
		bd := Bind{Path: c, Write: true, Exec: true, Optional: true}
		if s.CacheDir != "" {
			bd.Upper = filepath.Join(s.CacheDir, strconv.Itoa(i))
		}
		b = append(b, bd)
	}
	slices.SortStableFunc(b, func(x, y Bind) int { return strings.Count(x.Path, "/") - strings.Count(y.Path, "/") })
	return b
}

// Writes reports whether the tools may write host path p, by any name the host gives
// it (resolvedForms): whether the bind that makes one of them visible is writable. It
// must run on the host.
func (s Spec) Writes(p string) bool {
	binds := s.Binds()
	for _, f := range append([]string{p}, resolvedForms(p, map[string]string{})...) {
		if b, ok := bindOf(binds, f); ok && b.Write {
			return true
		}
	}
	return false
}

// bindOf is the bind that makes path visible: the deepest one at or above it.
func bindOf(binds []Bind, path string) (Bind, bool) {
	var best Bind
	found := false
	for _, b := range binds {
		if pathname.Within(b.Path, path) && (!found || len(b.Path) > len(best.Path)) {
			best, found = b, true
		}
	}
	return best, found
}

// ExternalDirs lists the host's top-level directories that belong to no other scope:
// the external scope of a bash_mode, such as /home, /opt and /work.
func ExternalDirs() []string {
	entries, err := os.ReadDir("/")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		p := "/" + e.Name()
		if slices.Contains(runtimeDirs, p) || slices.Contains(systemDirs, p) || slices.Contains(virtualDirs, p) {
			continue
		}
		if e.IsDir() || e.Type()&os.ModeSymlink == 0 {
			out = append(out, p)
		}
	}
	return out
}

// MemoryLimit is the session's memory limit in bytes: Memory, or DefaultMemory of this
// machine; 0 (none) where the machine's memory is unknown.
func (s Spec) MemoryLimit() uint64 {
	if s.Memory > 0 {
		return s.Memory
	}
	memory, err := MachineMemory()
	if err != nil {
		return 0
	}
	return DefaultMemory(memory)
}

// ScratchSize is the size in bytes of the session's scratch space at level strict:
// Scratch, or DefaultScratch of this machine, and at most half the memory limit. The
// scratch space's pages count in that limit and no process holds them, so a full
// scratch space leaves the session's processes the other half, where one as large as
// the limit would leave its next command no memory to start in.
func (s Spec) ScratchSize() (uint64, error) {
	size := s.Scratch
	if size == 0 {
		var err error
		if size, err = MachineScratch(); err != nil {
			return 0, err
		}
	}
	if limit := s.MemoryLimit(); limit > 0 {
		size = min(size, limit/2)
	}
	return size, nil
}
