package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/testbuild"
	"github.com/agentrun/agentrun/worker/workertest"
)

func requireLevel(t *testing.T, l sandbox.Level) {
	t.Helper()
	if err := sandbox.Probe().Supports(l); err != nil {
		t.Skipf("this machine cannot run sandbox level %s: %v", l, err)
	}
}

// confinedLevels runs body as a parallel subtest for each confined level this machine
// has, in a new folder of its own with its links resolved.
func confinedLevels(t *testing.T, body func(t *testing.T, level sandbox.Level, dir string)) {
	for _, level := range []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock} {
		t.Run(string(level), func(t *testing.T) {
			t.Parallel()
			requireLevel(t, level)
			dir, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			body(t, level, dir)
		})
	}
}

// TestRunRefusesAMissingLevel checks that a run whose sessions need a level the
// machine lacks fails before anything starts: no session folder, no run.json.
func TestRunRefusesAMissingLevel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := writeSpec(t, dir, `version: 1
defaults: {model: success, sandbox: {level: strict}}
jobs:
  - {id: one, prompt: Write the notes., workspace: {dir: ., mode: copy}}
`)
	out := filepath.Join(dir, "out")
	r := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t)),
		Sandbox: runner.SandboxOptions{Report: &sandbox.Report{}}})
	_, err := r.Run(context.Background(), spec)
	require.ErrorIs(t, err, runner.ErrSandbox)
	assert.Contains(t, err.Error(), "strict needs")
	assert.NoDirExists(t, out, "nothing was written")
}

// TestRunRefusesAnUnconfinedNetwork checks that on a kernel whose Landlock has no
// network rules (ABI 3), where level landlock is the best, a session whose bash_mode
// opens the network runs nothing, and one whose bash_mode closes it runs.
func TestRunRefusesAnUnconfinedNetwork(t *testing.T) {
	t.Parallel()
	requireLevel(t, sandbox.LevelLandlock)
	yes := sandbox.Feature{OK: true}
	abi3 := &sandbox.Report{UserNS: sandbox.Feature{Reason: "refused here"}, Landlock: yes, Seccomp: yes, NoNewPrivs: yes, LandlockABI: 3}
	for name, tc := range map[string]struct {
		mode    string
		wantErr bool
	}{
		"network open":   {"0467", true},
		"network closed": {"0407", false},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			spec := writeSpec(t, dir, "version: 1\ndefaults: {model: success, bash_mode: \""+tc.mode+"\"}\njobs:\n  - {id: one, prompt: Write the notes., workspace: {dir: ., mode: copy}}\n")
			out := filepath.Join(dir, "out")
			sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t)),
				Sandbox: runner.SandboxOptions{Report: abi3}}).Run(context.Background(), spec)
			if tc.wantErr {
				require.ErrorIs(t, err, runner.ErrSandbox)
				assert.Contains(t, err.Error(), "session one: sandbox level landlock with network needs Landlock ABI 4")
				assert.Contains(t, err.Error(), "network digit 0")
				assert.NoDirExists(t, out, "no tool ran")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 1, sum.Totals.Passed, sum.Text())
			assert.Equal(t, "landlock", sum.Sessions[0].Sandbox)
			assert.FileExists(t, filepath.Join(out, runner.WorkspacesDir, "one", "notes", "success.txt"), "the worker wrote it")
		})
	}
}

// TestRunEndsWhenTheSandboxFails runs a session whose worker cannot set its sandbox
// up (a worker that answers its config with FAIL, as one does when the kernel refuses a
// layer): the session ends at its first tool call with error_sandbox, naming why, and
// the model is not asked to go on without tools.
func TestRunEndsWhenTheSandboxFails(t *testing.T) {
	t.Parallel()
	requireLevel(t, sandbox.LevelLandlock)
	dir := t.TempDir()
	frame := filepath.Join(dir, "fail.frame")
	require.NoError(t, os.WriteFile(frame, protocol.AppendFrame(nil, "FAIL", "landlock: the kernel refused the ruleset"), 0o644))
	bin := filepath.Join(dir, "failing-worker")
	testbuild.WriteExecutable(t, bin, []byte("#!/bin/sh\n/usr/bin/head -c 1 <&3 >/dev/null\n/usr/bin/cat "+frame+" >&4\n"))
	spec := writeSpec(t, dir, `version: 1
defaults: {model: success, sandbox: {level: landlock}}
jobs:
  - {id: one, prompt: Write the notes., workspace: {dir: ., mode: copy}}
`)
	out := filepath.Join(dir, "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t)),
		Sandbox: runner.SandboxOptions{Binary: bin}}).Run(context.Background(), spec)
	require.NoError(t, err)
	require.Len(t, sum.Sessions, 1)
	assert.Equal(t, 1, sum.Totals.Failed, sum.Text())
	var res protocol.Result
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(out, runner.SessionsDir, "one", runner.ResultFile))), &res))
	assert.Equal(t, protocol.StatusSandbox, res.Status)
	require.NotNil(t, res.Error)
	assert.Equal(t, protocol.ErrSandbox, res.Error.Kind)
	assert.Contains(t, res.Error.Message, "sandbox landlock could not be set up: landlock: the kernel refused the ruleset")
	assert.Equal(t, 1, res.NumTurns, "the turn that asked for the tool, and no other")
	assert.Empty(t, res.Sandbox.Layers, "no layer was ever in force")
}

// TestRunRefusesASilentOff checks that a machine with no confinement at all runs
// nothing unless the spec says off, and then runs it.
func TestRunRefusesASilentOff(t *testing.T) {
	t.Parallel()
	none := &sandbox.Report{}
	for _, tt := range []struct {
		name, defaults string
		wantErr        bool
	}{
		{"level absent", "{model: success}", true},
		{"off spelled out", `{model: success, sandbox: {level: "off"}}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			spec := writeSpec(t, dir, "version: 1\ndefaults: "+tt.defaults+"\njobs:\n  - {id: one, prompt: Write the notes., workspace: {dir: ., mode: copy}}\n")
			out := filepath.Join(dir, "out")
			sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t)),
				Sandbox: runner.SandboxOptions{Report: none}}).Run(context.Background(), spec)
			if tt.wantErr {
				require.ErrorIs(t, err, runner.ErrSandbox)
				assert.Contains(t, err.Error(), `write sandbox: {level: "off"}`)
				assert.NoDirExists(t, out)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 1, sum.Totals.Passed, sum.Text())
			assert.Equal(t, "off", sum.Sessions[0].Sandbox)
		})
	}
}

// TestRunRecordsTheSandbox runs a session whose tool wrote a file and checks that its
// session_start and result.json name the level and the layers in force.
func TestRunRecordsTheSandbox(t *testing.T) {
	t.Parallel()
	requireLevel(t, sandbox.LevelStrict)
	dir := t.TempDir()
	spec := writeSpec(t, dir, `version: 1
defaults: {model: success}
jobs:
  - {id: one, prompt: Write the notes., workspace: {dir: ., mode: copy}}
`)
	out := filepath.Join(dir, "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t))}).Run(context.Background(), spec)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Totals.Passed, sum.Text())
	assert.FileExists(t, filepath.Join(out, runner.WorkspacesDir, "one", "notes", "success.txt"), "the worker wrote it")
	var res protocol.Result
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(out, runner.SessionsDir, "one", runner.ResultFile))), &res))
	require.NotNil(t, res.Sandbox)
	assert.Equal(t, "strict", res.Sandbox.Level)
	assert.Subset(t, res.Sandbox.Layers, []string{"userns", "mountns", "pidns", "netns", "landlock", "seccomp", "no_new_privs"})
	first, _, _ := strings.Cut(readFile(t, filepath.Join(out, runner.SessionsDir, "one", runner.StreamFile)), "\n")
	assert.Contains(t, first, `"sandbox":{"level":"strict"`)
	assert.Equal(t, "strict", sum.Sessions[0].Sandbox)
	assert.NotContains(t, sum.Markdown(), "Sandbox off")
}

// TestRunShowsSandboxOff checks that a run with the sandbox off says so where people
// look: summary.md and a GitHub warning.
func TestRunShowsSandboxOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := writeSpec(t, dir, `version: 1
defaults: {model: success, sandbox: {level: "off"}}
jobs:
  - {id: one, prompt: Write the notes., workspace: {dir: ., mode: copy}}
`)
	out := filepath.Join(dir, "out")
	var log bytes.Buffer
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t)),
		GitHub: &runner.GitHub{Log: &log}}).Run(context.Background(), spec)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Totals.Passed, sum.Text())
	assert.Contains(t, readFile(t, filepath.Join(out, runner.SummaryMDFile)), "> **⚠ Sandbox off: 1 session ran its tools without kernel confinement")
	assert.Equal(t, []string{"Sandbox off: 1 session ran its tools without kernel confinement (sandbox.level: off)."}, sum.Warnings)
	assert.Contains(t, log.String(), "::warning title=agentrun%3A warning::Sandbox off: 1 session ran")
}

// TestRunRefusedConnection runs a session whose tool fetches a URL it may not reach:
// at level strict off the allowlist through the sandbox's proxy, at level landlock
// around the proxy with a direct connection to an allowed host, which the sandbox (not
// the proxy) refuses. The server never sees the request, no file lands in the
// workspace, and events.jsonl holds a sandbox_violation naming the target.
func TestRunRefusedConnection(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	for name, tc := range map[string]struct {
		level     sandbox.Level
		model     string
		allow     string
		host      string // the probe's host in place of 127.0.0.1
		proxySeen bool   // the model sees the proxy's 403
	}{
		"through the proxy": {sandbox.LevelStrict, "netprobe", "example.invalid", "probe.invalid", true},
		"around the proxy":  {sandbox.LevelLandlock, "directprobe", `"127.0.0.1"`, "127.0.0.1", false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			requireLevel(t, tc.level)
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				hits.Add(1)
				_, _ = w.Write([]byte("secret page"))
			}))
			defer srv.Close()
			url := strings.Replace(srv.URL, "127.0.0.1", tc.host, 1)
			dir := t.TempDir()
			spec := writeSpec(t, dir, `version: 1
defaults:
  model: `+tc.model+`
  sandbox: {level: `+string(tc.level)+`}
  network: {allow: [`+tc.allow+`]}
  env: {PROBE_URL: "`+url+`"}
jobs:
  - {id: probe, prompt: Fetch the page., workspace: {dir: ., mode: copy}}
`)
			out := filepath.Join(dir, "out")
			sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t)),
				Environ: []string{"PATH=" + os.Getenv("PATH")}}).Run(context.Background(), spec)
			require.NoError(t, err)
			require.Equal(t, 1, sum.Totals.Passed, sum.Text())
			assert.Zero(t, hits.Load(), "the request never reached the server")
			assert.NoFileExists(t, filepath.Join(out, runner.WorkspacesDir, "probe", "fetched.txt"))
			events := readFile(t, filepath.Join(out, runner.SessionsDir, "probe", runner.EventsFile))
			if tc.proxySeen {
				assert.Contains(t, events, "403", "the model sees the proxy's refusal")
			}
			assertDenied(t, events, `"target":"`+strings.TrimPrefix(url, "http://")+`"`)
		})
	}
}

// assertDenied checks that events (an events.jsonl) holds a network_denied
// sandbox_violation whose line has target in it.
func assertDenied(t *testing.T, events, target string) {
	t.Helper()
	for line := range strings.Lines(events) {
		if strings.Contains(line, `"type":"sandbox_violation"`) && strings.Contains(line, target) {
			assert.Contains(t, line, `"kind":"network_denied"`)
			return
		}
	}
	assert.Fail(t, "no sandbox_violation for "+target, "events.jsonl:\n%s", events)
}

// TestRunRefusesChainedProxies runs two sessions at level landlock at once, whose
// proxies both listen on the host's loopback. The chainer's allowlist holds 127.0.0.1;
// its tool tunnels through its own proxy into the peer's, to reach a server on
// 127.0.0.2 that only the peer's allowlist holds. The runner's proxies refuse each
// other: the server never sees a request, nothing lands in the chainer's workspace,
// and its events.jsonl records the violation.
func TestRunRefusesChainedProxies(t *testing.T) {
	t.Parallel()
	requireLevel(t, sandbox.LevelLandlock)
	var hits atomic.Int32
	l, err := net.Listen("tcp", "127.0.0.2:0")
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("peer-only page"))
	}))
	srv.Listener = l
	srv.Start()
	defer srv.Close()
	dir := t.TempDir()
	chain := filepath.Join(dir, "chain")
	require.NoError(t, os.Mkdir(chain, 0o755))
	for _, f := range []string{"port", "done"} {
		require.NoError(t, unix.Mkfifo(filepath.Join(chain, f), 0o600))
	}
	spec := writeSpec(t, dir, `version: 1
concurrency: 2
defaults:
  sandbox: {level: landlock, writable: ["`+chain+`"]}
  tool_timeout: 30s
  env: {CHAIN_DIR: "`+chain+`", CHAIN_TARGET: "`+l.Addr().String()+`"}
jobs:
  - {id: peer, model: chainpeer, prompt: Hand over., network: {allow: [127.0.0.2]}, workspace: {dir: ., mode: copy}}
  - {id: chainer, model: chainer, prompt: Chain., network: {allow: [127.0.0.1]}, workspace: {dir: ., mode: copy}}
`)
	out := filepath.Join(dir, "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(loadScripts(t)),
		Environ: []string{"PATH=" + os.Getenv("PATH")}}).Run(context.Background(), spec)
	require.NoError(t, err)
	require.Equal(t, 2, sum.Totals.Passed, sum.Text())
	assert.Zero(t, hits.Load(), "the peer's allowlisted server was reached through the chainer's proxy")
	assert.NoFileExists(t, filepath.Join(out, runner.WorkspacesDir, "chainer", "fetched.txt"))
	events := readFile(t, filepath.Join(out, runner.SessionsDir, "chainer", runner.EventsFile))
	assert.Contains(t, events, "hop 1: HTTP/1.1 403", "the chainer's proxy refused the first hop")
	assertDenied(t, events, `"target":"127.0.0.1:`)
}

// TestRunRefusesAHiddenPathInAWritableFolder runs a session at level landlock in a
// shared workspace that holds the run's output folder: Landlock could hide the
// sessions' artifacts only by taking the workspace's own folder from the tools, so the
// session ends error_sandbox before its first model call, saying how to fix it, and
// its tools never run. In a copy of the workspace it runs.
func TestRunRefusesAHiddenPathInAWritableFolder(t *testing.T) {
	t.Parallel()
	requireLevel(t, sandbox.LevelLandlock)
	for name, mode := range map[string]string{"shared": "shared", "copy": "copy", "shared home": "shared", "shared home with a bashrc": "shared"} {
		t.Run(name, func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			spec := writeSpec(t, dir, "version: 1\ndefaults: {model: success, sandbox: {level: landlock}}\njobs:\n  - {id: one, prompt: Write the notes., workspace: {dir: ., mode: "+mode+"}}\n")
			out := filepath.Join(dir, "out")
			hidden, fix := filepath.Join(out, runner.SessionsDir), "--out"
			if name == "shared home" {
				// The workspace is the tools' home, which holds a credential store,
				// and the output folder is elsewhere.
				hidden, fix = filepath.Join(dir, ".ssh"), "system read bit"
				require.NoError(t, os.Mkdir(hidden, 0o700))
				out = t.TempDir()
			}
			if name == "shared home with a bashrc" {
				// A shell's startup file, which every home holds, where the tools
				// could leave code for the user's next shell.
				hidden, fix = filepath.Join(dir, ".bashrc"), "system read bit"
				require.NoError(t, os.WriteFile(hidden, []byte("# bashrc\n"), 0o644))
				out = t.TempDir()
			}
			sum, err := newRunner(t, runner.Options{Out: out, Home: dir, Providers: newInProcess(loadScripts(t))}).Run(context.Background(), spec)
			require.NoError(t, err)
			require.Len(t, sum.Sessions, 1)
			row := sum.Sessions[0]
			if mode == "copy" {
				assert.Equal(t, protocol.StatusSuccess, row.Status, sum.Text())
				return
			}
			assert.Equal(t, protocol.StatusSandbox, row.Status, sum.Text())
			require.NotNil(t, row.Error)
			assert.Equal(t, protocol.ErrSandbox, row.Error.Kind)
			assert.Contains(t, row.Error.Message, hidden)
			assert.Contains(t, row.Error.Message, fix)
			assert.Zero(t, row.NumTurns, "the model was called")
			assert.NoFileExists(t, filepath.Join(dir, "notes", "success.txt"), "a tool ran")
		})
	}
}

// TestRunSizesTheScratchSpace: a spec's sandbox.scratch_mib is the size of the tools'
// scratch space (/tmp, /dev/shm and home together), and a write past it fails.
func TestRunSizesTheScratchSpace(t *testing.T) {
	t.Parallel()
	requireLevel(t, sandbox.LevelStrict)
	scripts := scriptsWith(t, "fill", `steps:
  - tool_calls: [{name: Bash, input: {command: "head -c 6M /dev/zero > /tmp/a; head -c 6M /dev/zero > /tmp/b; echo status=$?; du -cb /tmp/a /tmp/b | tail -1"}}]
  - text: "Filled."
`)
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "out")
	sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: os.Environ()}).
		Run(context.Background(), writeSpec(t, dir, "version: 1\ndefaults: {tools: [Bash], sandbox: {level: strict, scratch_mib: 8}}\njobs:\n  - {id: fill, model: fill, prompt: Fill it.}\n"))
	require.NoError(t, err)
	require.Len(t, sum.Sessions, 1)
	results := toolResults(t, out, "fill")
	require.Len(t, results, 1)
	output := results[0].Content
	assert.Contains(t, output, "No space left on device", "the second write fit: %s", output)
	assert.NotContains(t, output, "status=0", output)
	total := regexp.MustCompile(`(\d+)\ttotal`).FindStringSubmatch(output)
	require.NotNil(t, total, output)
	held, err := strconv.Atoi(total[1])
	require.NoError(t, err, output)
	assert.LessOrEqual(t, held, 8<<20, "the tools' scratch folders hold more than 8 MiB")
}

// TestRunLimitsTheMemory: sandbox.memory_mib reaches the session's cgroup. At each
// confined level a tool that touches four times the limit is killed by the kernel, the
// tool's result says why, and the session goes on to its answer.
func TestRunLimitsTheMemory(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("the memory cgroup needs root")
	}
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		scripts := scriptsWith(t, "hog", `steps:
  - tool_calls: [{name: Bash, input: {command: "dd if=/dev/zero of=/dev/null bs=128M count=1; echo status=$?"}}]
  - text: "Done."
`)
		out := filepath.Join(t.TempDir(), "out")
		spec := fmt.Sprintf("version: 1\ndefaults: {tools: [Bash], sandbox: {level: %s, memory_mib: 32}}\njobs:\n  - {id: hog, model: hog, prompt: Hog it.}\n", level)
		sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: os.Environ()}).
			Run(context.Background(), writeSpec(t, dir, spec))
		require.NoError(t, err)
		require.Len(t, sum.Sessions, 1)
		assert.Equal(t, protocol.StatusSuccess, sum.Sessions[0].Status, "the session goes on to its answer")
		results := toolResults(t, out, "hog")
		require.Len(t, results, 1)
		assert.Contains(t, results[0].Content, "status=137", "dd was not killed")
		assert.Contains(t, results[0].Content, "the session reached its memory limit of 32 MiB", results[0].Content)
	})
}

// TestToolsCannotReplaceTheWorker: the worker's executable lies in a folder the tools
// may write (an install under a writable home, say). Every session's worker starts
// from it unconfined and confines itself, so a tool that replaced it (the running one
// cannot be written, but it can be removed and made anew) would run its own code
// outside the sandbox at the next start. At strict the tools must not change it;
// at landlock, which cannot take one file out of a writable folder, the session ends
// error_sandbox before any tool runs.
func TestToolsCannotReplaceTheWorker(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		tools := filepath.Join(dir, "tools")
		require.NoError(t, os.Mkdir(tools, 0o755))
		bin := filepath.Join(tools, "agentrun-worker")
		orig, err := os.ReadFile(workertest.Bin(t))
		require.NoError(t, err)
		testbuild.WriteExecutable(t, bin, orig)
		scripts := scriptsWith(t, "replace", `steps:
  - tool_calls: [{name: Bash, input: {command: "rm -f `+bin+`; printf '#!/bin/sh\\ntouch `+dir+`/escaped\\n' > `+bin+`; chmod +x `+bin+`; ls -l `+bin+`"}}]
  - text: "Replaced."
`)
		out := filepath.Join(t.TempDir(), "out")
		spec := writeSpec(t, dir, "version: 1\nconcurrency: 1\ndefaults: {tools: [Bash], sandbox: {level: "+string(level)+", writable: [\""+tools+"\"]}}\n"+
			"jobs:\n  - {id: replace, model: replace, prompt: Replace it., repeat: 2}\n")
		sum, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: os.Environ(),
			Sandbox: runner.SandboxOptions{Binary: bin}}).Run(context.Background(), spec)
		require.NoError(t, err)
		require.Len(t, sum.Sessions, 2)
		now, err := os.ReadFile(bin)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(orig, now), "ESCAPE at level %s: a tool rewrote the worker's executable", level)
		assert.NoFileExists(t, filepath.Join(dir, "escaped"), "ESCAPE at level %s: the tools' worker ran unconfined", level)
		for _, row := range sum.Sessions {
			if level == sandbox.LevelLandlock {
				assert.Equal(t, protocol.StatusSandbox, row.Status, sum.Text())
				if assert.NotNil(t, row.Error) {
					assert.Contains(t, row.Error.Message, bin)
					assert.Contains(t, row.Error.Message, "install agentrun")
				}
				continue
			}
			assert.Equal(t, protocol.StatusSuccess, row.Status, sum.Text())
		}
	})
}

// TestRunHidesRootOnlyFiles: a run as root hides from its tools what the host lets
// nobody but root read, such as a root-only file of /etc: the tools run as uid 0 too.
func TestRunHidesRootOnlyFiles(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("the host's modes keep root-only files from a tool that is not root")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("the read goes through python3, whose file names the bash policy does not see")
	}
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	secret := "root-only-secret-" + stamp
	name := "agentrun-root-only-" + stamp // the policy would refuse a plain cat of /etc
	file := filepath.Join("/etc", name)
	require.NoError(t, os.WriteFile(file, []byte(secret+"\n"), 0o600))
	t.Cleanup(func() { _ = os.Remove(file) })
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		out := filepath.Join(dir, "out")
		read := `python3 -c \"import os; print(open(os.sep.join(['', 'etc', '` + name + `'])).read())\"`
		scripts := scriptsWith(t, "peek", "steps:\n  - tool_calls: [{name: Bash, input: {command: \""+read+"\"}}]\n  - text: \"Peeked.\"\n")
		spec := fmt.Sprintf("version: 1\ndefaults: {tools: [Bash], bash_mode: \"0467\", env: {PATH: /usr/bin:/bin}, sandbox: {level: %s}}\njobs:\n  - {id: peek, model: peek, prompt: Peek.}\n", level)
		_, err := newRunner(t, runner.Options{Out: out, Providers: newInProcess(scripts), Environ: os.Environ()}).
			Run(context.Background(), writeSpec(t, dir, spec))
		require.NoError(t, err)
		results := toolResults(t, out, "peek")
		require.Len(t, results, 1)
		assert.NotContains(t, results[0].Content, secret, "LEAK at level %s: %s", level, results[0].Content)
		assert.Regexp(t, "No such file or directory|Permission denied", results[0].Content, "the read did not run")
	})
}
