package escape_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/sandbox/netproxy"
	"github.com/agentrun/agentrun/worker"
	"github.com/agentrun/agentrun/worker/workertest"
)

// allPolicy is the classifier's bash_mode that lets every command and path through, so
// that what stops an attempt is the kernel.
const allPolicy = "7777"

// attempt is one named way out. Its command (Bash) or input (another tool) holds
// placeholders (see fixture.expander); effect says what must not happen on the host.
type attempt struct {
	name  string
	tool  string // "" is Bash
	cmd   string // the Bash command, or the tool's input JSON
	needs string // a program the attempt needs on the host's PATH, or (absolute) a file glob
	// effect is checked before and after the call; nil checks the secrets only.
	effect effect
	// strict and landlock say whether the attempt must be held at that level. An
	// attempt a level cannot hold is a gap: it is logged, and gap says why.
	strict, landlock bool
	gap              string
	// off runs the attempt at level off too, where it must get through: the proof that
	// the vector works at all (only for attempts whose effect stays in test folders).
	off bool
}

// must reports whether the attempt has to be held at level l.
func (a attempt) must(l sandbox.Level) bool {
	switch l {
	case sandbox.LevelStrict:
		return a.strict
	case sandbox.LevelLandlock:
		return a.landlock
	default:
		return false
	}
}

// effect prepares a check of one attempt: it runs before the call and returns a
// function that judges the call's output and the host afterwards, saying whether the
// attempt was held and, if not, what got through.
type effect func(t *testing.T, fx *fixture, x *expander) func(out string) (held bool, what string)

// options shape a fixture's worker.
type options struct {
	mode   string   // the kernel's bash_mode
	policy string   // the classifier's bash_mode; allPolicy when empty
	allow  []string // the network allowlist; nil serves no proxy
	home   string   // the home directory, in an external folder of its own; a new one when empty
	// homeLink makes the home directory a symbolic link to a folder beside it.
	homeLink bool
	// onViolation hears of the connections the proxy refuses.
	onViolation func(netproxy.Violation)
	// scratch is the size of the scratch space (Spec.Scratch); 0 is the default.
	scratch uint64
	// homeFiles are more files of the home directory (a path in it → the content),
	// there before the sandbox starts.
	homeFiles map[string]string
	// rootOnly hides what the host lets nobody but root read, as the runner does
	// (Spec.RootOnly).
	rootOnly bool
}

// levels runs body once per confined level (and at off when off is set), skipping the
// levels this machine cannot give.
func levels(t *testing.T, off bool, body func(t *testing.T, level sandbox.Level)) {
	ls := []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock}
	if off {
		ls = append(ls, sandbox.LevelOff)
	}
	for _, level := range ls {
		t.Run(string(level), func(t *testing.T) {
			if err := sandbox.Probe().Supports(level); err != nil {
				t.Skipf("this machine cannot run level %s: %v", level, err)
			}
			body(t, level)
		})
	}
}

// runTable runs each attempt of table that applies to the fixture's level, in order,
// as a subtest of its own.
func runTable(t *testing.T, fx *fixture, table []attempt) {
	for _, a := range table {
		if fx.level == sandbox.LevelOff && !a.off {
			continue
		}
		t.Run(a.name, func(t *testing.T) { fx.try(t, a) })
	}
}

// try runs one attempt and judges it.
func (fx *fixture) try(t *testing.T, a attempt) {
	if strings.HasPrefix(a.needs, "/") {
		if m, _ := filepath.Glob(a.needs); len(m) == 0 {
			t.Skipf("no %s on this machine", a.needs)
		}
	} else if a.needs != "" && !installed(a.needs) {
		t.Skipf("%s is not installed", a.needs)
	}
	x := fx.expander(a.name)
	var check func(string) (bool, string)
	if a.effect != nil {
		check = a.effect(t, fx, x)
	}
	var out string
	if a.tool == "" || a.tool == "Bash" {
		out = fx.bash(t, x.expand(a.cmd), 20).Content
	} else {
		out = fx.run(t, a.tool, x.expand(a.cmd)).Content
	}
	held, what := true, ""
	if check != nil {
		held, what = check(out)
	}
	if held {
		if leaked := fx.leaked(out); leaked != "" {
			held, what = false, "the output holds "+leaked
		}
	}
	fx.judge(t, a, held, what, out)
}

// judge asserts the outcome the attempt's table entry expects at the fixture's level.
func (fx *fixture) judge(t *testing.T, a attempt, held bool, what, out string) {
	t.Helper()
	if testing.Verbose() {
		t.Logf("held=%v output: %.200q", held, out)
	}
	switch {
	case fx.level == sandbox.LevelOff:
		assert.False(t, held, "control: %q was held at level off, so the attempt proves nothing\noutput:\n%s", a.name, clip(out))
	case a.must(fx.level):
		assert.True(t, held, "ESCAPE at level %s: %q: %s\noutput:\n%s", fx.level, a.name, what, clip(out))
	case held:
		t.Logf("level %s held %q although it is listed as a gap (%s)", fx.level, a.name, a.gap)
	default:
		t.Logf("GAP at level %s: %q: %s (%s)", fx.level, a.name, what, a.gap)
	}
}

// fixture is one fake host layout and one worker serving it:
//
//	root/            in the external scope (read-only at bash_mode 0467)
//	  ws/            the workspace
//	  outside/       target.txt, a file outside the workspace
//	  home/          $HOME: .ssh/config holds a secret, notes.txt does not
//	hostonly/        in no scope: secret.txt
type fixture struct {
	level                         sandbox.Level
	root, ws, outside, home, host string
	target                        string
	sshSecret, hostSecret, notes  string
	sleeper                       *exec.Cmd
	sleeperName                   string
	client                        *worker.Client
	placeholders                  []string
	nextID                        int // the id of the client's next request
	proxyPort                     int // level landlock with a proxy: its port on the host's loopback
}

// newFixture builds the layout and a client for level; the worker starts at the first
// call and is closed at the end of the test.
func newFixture(t *testing.T, level sandbox.Level, o options) *fixture {
	t.Helper()
	fx := &fixture{level: level}
	fx.root = realTemp(t)
	fx.host = realTemp(t)
	fx.ws = filepath.Join(fx.root, "ws")
	fx.outside = filepath.Join(fx.root, "outside")
	fx.home = filepath.Join(fx.root, "home")
	if o.home != "" {
		fx.home = o.home
	}
	if o.homeLink {
		// $HOME is a link to the folder, as /home is to /var/home on Fedora's
		// atomic desktops.
		real := filepath.Join(fx.root, "var", "home")
		require.NoError(t, os.MkdirAll(real, 0o755))
		require.NoError(t, os.Symlink(real, fx.home))
	}
	fx.target = filepath.Join(fx.outside, "target.txt")
	fx.sshSecret = "ssh-secret-" + randomHex(8)
	fx.hostSecret = "host-secret-" + randomHex(8)
	fx.notes = "home-notes-" + randomHex(8)
	for _, d := range []string{fx.ws, fx.outside, filepath.Join(fx.home, ".ssh")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	writeFile(t, fx.target, "outside target: must stay as it is\n")
	writeFile(t, filepath.Join(fx.home, ".ssh", "config"), "Host *\n  IdentityFile "+fx.sshSecret+"\n")
	writeFile(t, filepath.Join(fx.home, ".ssh", "id_"+fx.sshSecret), "key\n")
	writeFile(t, filepath.Join(fx.home, "notes.txt"), fx.notes+"\n")
	for rel, content := range o.homeFiles {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(fx.home, rel)), 0o755))
		writeFile(t, filepath.Join(fx.home, rel), content)
	}
	writeFile(t, filepath.Join(fx.host, "secret.txt"), fx.hostSecret+"\n")
	writeFile(t, filepath.Join(fx.ws, "inside.txt"), "inside\n")
	fx.startSleeper(t)
	t.Cleanup(fx.stopSleeper)

	mode, err := sandbox.ParseMode(o.mode)
	require.NoError(t, err)
	policy := o.policy
	if policy == "" {
		policy = allPolicy
	}
	spec := sandbox.Spec{Level: level, Mode: mode, Workspace: fx.ws, Home: fx.home,
		External: append(sandbox.ExternalDirs(), fx.root, filepath.Dir(fx.home)), Scratch: o.scratch}
	if o.rootOnly {
		spec.RootOnly = sandbox.RootOnly()
	}
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + fx.home, "LANG=C.UTF-8"}
	cfg := worker.Config{BashMode: policy, Timeout: time.Minute, IdleExit: time.Hour}
	if level == sandbox.LevelLandlock {
		spec.TempDir = realTemp(t)
		env = append(env, "TMPDIR="+spec.TempDir)
	}
	cfg.Spec, cfg.Env = spec, env
	cfg.Hidden = spec.Hidden()
	var serve func(net.Listener)
	if o.allow != nil {
		serve = serveProxy(t, &cfg, o)
	}
	fx.client = worker.New(cfg, workertest.Bin(t), nil)
	if serve != nil {
		fx.client.SetProxy(serve)
	}
	fx.proxyPort = cfg.ProxyPort
	if o.onViolation != nil {
		fx.client.SetRefusedConnect(func(target string) { o.onViolation(netproxy.Direct(target)) })
	}
	t.Cleanup(func() { assert.NoError(t, fx.client.Close()) })
	fx.placeholders = []string{
		"{WS}", fx.ws, "{ROOT}", fx.root, "{OUTDIR}", fx.outside, "{TARGET}", fx.target,
		"{HOME}", fx.home, "{HOSTONLY}", fx.host, "{TESTPID}", strconv.Itoa(os.Getpid()),
		"{SLEEPNAME}", fx.sleeperName,
	}
	return fx
}

// startSleeper starts a process outside the sandbox, as the host's: the planted key and
// the host secret are in its environment, and its name is unique.
func (fx *fixture) startSleeper(t *testing.T) {
	t.Helper()
	if fx.sleeperName == "" {
		fx.sleeperName = "escape-host-sleeper-" + randomHex(6)
	}
	cmd := exec.Command("sleep", "1000")
	cmd.Args[0] = fx.sleeperName
	cmd.Env = []string{"PATH=/usr/bin:/bin", keyVar + "=" + plantedKey(), "HOST_SECRET=" + fx.hostSecret}
	require.NoError(t, cmd.Start())
	fx.sleeper = cmd
}

// stopSleeper ends the host's sleeper and reaps it.
func (fx *fixture) stopSleeper() {
	_ = fx.sleeper.Process.Kill()
	_ = fx.sleeper.Wait()
}

// sleeperAlive reports whether the host's sleeper still runs (and is not stopped).
func (fx *fixture) sleeperAlive() bool {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(fx.sleeper.Process.Pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(st)
	i := strings.LastIndexByte(s, ')')
	// Running, sleeping, or in a disk wait (a loaded machine pages a fresh sleeper in);
	// stopped, traced or dead is what an attempt on it looks like.
	if i <= 0 || i+2 >= len(s) || strings.IndexByte("RSD", s[i+2]) < 0 {
		return false
	}
	// A SIGKILL is asynchronous: kill(2) returns before the target dies. A kill still
	// pending, or an exit under way, counts as dead, or the next attempt inherits it.
	fields := strings.Fields(s[i+2:])
	const pfExiting = 0x4
	if len(fields) > 6 {
		if flags, err := strconv.ParseUint(fields[6], 10, 64); err == nil && flags&pfExiting != 0 {
			return false
		}
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(fx.sleeper.Process.Pid) + "/status")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(status)) {
		name, mask, ok := strings.Cut(strings.TrimSpace(line), ":\t")
		if !ok || (name != "SigPnd" && name != "ShdPnd") {
			continue
		}
		if bits, err := strconv.ParseUint(mask, 16, 64); err == nil && bits&(1<<(9-1)) != 0 {
			return false
		}
	}
	return true
}

// expander replaces the placeholders of one attempt: the fixture's and {OUT} (a path in
// outside/ to create), {RAN} (a workspace path the vector creates to prove it ran),
// {MARK} (a unique word) and {ETCX}, {USRX}, {TMPX}, {SHMX} (new host paths).
type expander struct{ r *strings.Replacer }

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

func (fx *fixture) expander(name string) *expander {
	slug := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(slug) > 40 {
		slug = slug[:40]
	}
	uniq := "escape-" + slug + "-" + randomHex(4)
	out := filepath.Join(fx.outside, uniq)
	pairs := append([]string{
		"{OUT}", out, "{B64}", base64.StdEncoding.EncodeToString([]byte("touch " + out + "\n")), "{RAN}", filepath.Join(fx.ws, "ran-"+uniq),
		"{MARK}", "mark-" + uniq, "{ETCX}", "/etc/" + uniq, "{USRX}", "/usr/" + uniq,
		"{TMPX}", "/tmp/" + uniq, "{SHMX}", "/dev/shm/" + uniq, "{NAME}", uniq,
		"{SLEEPER}", strconv.Itoa(fx.sleeper.Process.Pid),
		"{RUNNER}", strconv.Itoa(os.Getpid()), "{RUNNERGROUP}", strconv.Itoa(unix.Getpgrp()),
	}, fx.placeholders...)
	return &expander{r: strings.NewReplacer(pairs...)}
}

func (x *expander) expand(s string) string { return x.r.Replace(s) }

// bash runs a command through the Bash tool with a time limit in seconds.
func (fx *fixture) bash(t *testing.T, cmd string, timeout int) tools.Result {
	t.Helper()
	in, err := json.Marshal(map[string]any{"command": cmd, "timeout": timeout})
	require.NoError(t, err)
	return fx.run(t, "Bash", string(in))
}

// run runs one tool call in the worker.
func (fx *fixture) run(t *testing.T, tool, input string) tools.Result {
	t.Helper()
	require.True(t, json.Valid([]byte(input)), "input of %s is not JSON: %s", tool, input)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	fx.nextID++
	return fx.client.RunTool(ctx, tool, json.RawMessage(input))
}

// secrets are the strings no tool result may hold.
func (fx *fixture) secrets() []string {
	return []string{plantedKey(), fx.sshSecret, fx.hostSecret}
}

// leaked names the first secret out holds, or "".
func (fx *fixture) leaked(out string) string {
	for _, s := range fx.secrets() {
		if strings.Contains(out, s) {
			return "the secret " + s
		}
	}
	return ""
}

// Helpers.

func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:1000] + "\n[...]\n" + s[len(s)-1000:]
	}
	return s
}
