// Package worker runs a session's tool calls and checks in a separate, confined process
// (agentrun-worker, or the agentrun binary re-executed), speaking the seed's RESP framing over a pipe: a
// call goes in, its progress and result come back.
package worker

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/agentrun/agentrun/sandbox"
)

// The frame types of the worker boundary. Requests go from the runner to the worker,
// replies come back. Field 0 of every frame is its type.
const (
	frameConfig = "CONFIG" // runner → worker: config JSON
	frameCall   = "CALL"   // runner → worker: id, tool name, input JSON, env JSON
	frameExec   = "EXEC"   // runner → worker: id, command, timeout ms, max output, env JSON
	frameCancel = "CANCEL" // runner → worker: id
	// The stdio MCP servers, which run beside the requests.
	frameMCPStart = "MCPSTART" // runner → worker: id, MCPCommand JSON (the id names the server from then on)
	frameMCPIn    = "MCPIN"    // runner → worker: server id, bytes for its stdin
	frameMCPClose = "MCPCLOSE" // runner → worker: server id (stop it, in bounded time)

	frameReady    = "READY"    // worker → runner: ready JSON
	frameFail     = "FAIL"     // worker → runner: why the sandbox could not be set up
	frameActive   = "ACTIVE"   // worker → runner: id (a tool made progress)
	frameResult   = "RESULT"   // worker → runner: id, content, is_error
	frameExecDone = "EXECDONE" // worker → runner: id, output, exit code, timed out, error
	frameBye      = "BYE"      // worker → runner: idle and alone, exiting; later requests are not run

	frameMCPStarted = "MCPSTARTED" // worker → runner: id, pid, error ("" when it started)
	frameMCPOut     = "MCPOUT"     // worker → runner: server id, bytes of its stdout
	frameMCPExit    = "MCPEXIT"    // worker → runner: server id, how it ended, the end of its stderr
)

// maxFrame bounds one frame on the pipe: far above a tool result's cap.
const maxFrame = 64 << 20

// Config is everything the worker needs, sent as the first frame. It never holds a
// provider key.
type Config struct {
	// Build is the build of the agentrun that sent it; a worker of another build
	// refuses to start [set by New].
	Build  string       `json:"build"`
	Spec   sandbox.Spec `json:"spec"`
	Hidden []string     `json:"hidden,omitempty"`
	// Env is the complete environment of tool processes.
	Env []string `json:"env"`
	// BashMode is the policy the tools' classifier explains refusals by.
	BashMode string `json:"bash_mode"`
	// Timeout is a Bash call's default limit; MaxOutput caps one result.
	Timeout   time.Duration `json:"timeout"`
	MaxOutput int           `json:"max_output"`
	// IdleExit is how long the worker waits for a call before it exits, when no
	// process of the session remains.
	IdleExit time.Duration `json:"idle_exit"`
	// ProxyPort is the TCP port of the runner's proxy on the host loopback, for level
	// landlock, which has no network namespace of its own.
	ProxyPort int `json:"proxy_port,omitempty"`
	// LoopbackPort is set by stage 1 at level strict with network: the port on the
	// sandbox's loopback where the runner's proxy accepts the tools' connections.
	LoopbackPort int `json:"loopback_port,omitempty"`
	// OOMScoreFD is set by stage 1: the descriptor of its oom_score_adj that stage 2
	// inherits, with which stage 2 scores the tools' processes (preferVictims); -1
	// without.
	OOMScoreFD int `json:"oom_score_fd,omitempty"`
	// Ready is what stage 1 put in force before it started stage 2.
	Ready *Ready `json:"ready,omitempty"`
}

// Ready is what the worker reports once confined.
type Ready struct {
	Level  sandbox.Level   `json:"level"`
	Layers []sandbox.Layer `json:"layers"`
	// LandlockABI is the Landlock ABI in force, 0 when Landlock is not.
	LandlockABI int `json:"landlock_abi,omitempty"`
	PID         int `json:"pid"`
}

// ExecResult is what a command run by Exec did.
type ExecResult struct {
	Output   string
	ExitCode int
	TimedOut bool
	// Err is set when the command could not run at all.
	Err error
}

func encodeJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("worker: encode %T: %v", v, err)) // plain structs: cannot fail
	}
	return string(b)
}

// encodeEnv is the env field of a request: the variables its processes get on top of
// the tools' environment, as a JSON list, or empty when there are none.
func encodeEnv(env []string) string {
	if len(env) == 0 {
		return ""
	}
	return encodeJSON(env)
}

// withEnv returns base with the variables of field (encodeEnv) set over it; base
// itself is not changed.
func withEnv(base []string, field string) ([]string, error) {
	if field == "" {
		return base, nil
	}
	var extra []string
	if err := json.Unmarshal([]byte(field), &extra); err != nil {
		return nil, fmt.Errorf("worker: request env: %w", err)
	}
	names := map[string]bool{}
	for _, kv := range extra {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("worker: request env: %q is not NAME=VALUE", kv)
		}
		names[name] = true
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		if name, _, _ := strings.Cut(kv, "="); !names[name] {
			out = append(out, kv)
		}
	}
	return append(out, extra...), nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// want checks a frame's type and field count.
func want(fields []string, typ string, n int) error {
	if len(fields) != n || fields[0] != typ {
		return fmt.Errorf("worker: unexpected frame %q with %d fields (want %s with %d)", first(fields), len(fields), typ, n)
	}
	return nil
}

func first(fields []string) string {
	if len(fields) == 0 {
		return ""
	}
	if len(fields[0]) > 32 {
		return fields[0][:32]
	}
	return fields[0]
}

// ExitIfWorker runs the worker and exits when this process was started as one (its
// first argument is Command). Binaries that start workers from themselves, test
// binaries included, call it first thing in main or TestMain.
func ExitIfWorker() {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Main(os.Args[2:]))
	}
}
