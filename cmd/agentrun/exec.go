package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/mcpclient"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/providers"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/sandbox/netproxy"
	"github.com/agentrun/agentrun/sink"
)

const execSynopsis = `agentrun exec [PROMPT] [-p PROVIDER] [-m MODEL] [--base-url URL] [--max-turns N]
                [--session NAME|--continue|--fork|--list-sessions]
                [--output-format human|stream-json|claude|resp] [--skill NAME] [--script FILE]
                [--mcp-config FILE]`

const execExamples = `  agentrun exec "Run go vet and fix what it reports."
  echo "Summarise README.md" | agentrun exec --output-format stream-json
  agentrun exec --session fix-1 "Now add a test for it."       # resume (or create) a named session
  agentrun exec --continue "And update the changelog."          # newest session of this folder
  agentrun exec --continue --fork "Try the other approach."     # branch it into a new session
  agentrun exec --list-sessions
  agentrun exec --script steps.yaml "Fix the build."            # the scripted model plays steps.yaml
  agentrun exec --mcp-config .mcp.json "Triage the open issues." # Claude Code's MCP server file, as it is`

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func (a *App) cmdExec(ctx context.Context, args []string) error {
	fs := newFlags("exec")
	var ov providers.Overrides
	fs.StringVar(&ov.Provider, "p", "", "provider: anthropic, openai, responses or scripted (short for --provider)")
	fs.StringVar(&ov.Model, "m", "", "model (short for --model)")
	providerFlags(fs, &ov)
	maxTurns := fs.Int("max-turns", 50, "model calls at most")
	maxTokens := fs.Int("max-tokens", 16384, "output tokens per model call")
	toolTimeout := fs.Duration("tool-timeout", 10*time.Minute, "default time limit of one Bash call")
	timeout := fs.Duration("timeout", 0, "wall-clock limit of the session (0: none)")
	maxContext := fs.Int64("max-context", 200000, "context budget in tokens; compaction keeps the window under it")
	bashMode := fs.String("bash-mode", "", "safety policy, four octal digits (default $AGENTRUN_BASH_MODE, else 0467)")
	sandboxLevel := fs.String("sandbox", "", "confinement of the tools: strict, landlock or off (default: the strongest this machine has, see 'agentrun sandbox check')")
	toolList := fs.String("tools", "", "comma-separated tools to offer (default: all)")
	system := fs.String("system", "", "extra system instructions")
	format := fs.String("output-format", "human", "stdout: human (text), stream-json (one JSON event per line), claude (Claude Code's stream-json) or resp (the RESP frames)")
	session := fs.String("session", "", "resume the named session, or create it")
	cont := fs.Bool("continue", false, "resume the newest session of this folder")
	fork := fs.Bool("fork", false, "with --session or --continue: continue in a new session, leaving the old one as it was")
	list := fs.Bool("list-sessions", false, "list the sessions of this folder and exit")
	cwd := fs.String("cwd", "", "workspace folder (default: the current folder)")
	logFormat := fs.String("log-format", "", "log format on stderr: console or json")
	var skills stringList
	fs.Var(&skills, "skill", "load a skill (SKILL.md) into the system prompt; repeatable")
	script := fs.String("script", "", "a script (YAML) for the built-in scripted model to play instead of calling a model; implies --provider scripted")
	var mcpFiles stringList
	fs.Var(&mcpFiles, "mcp-config", `MCP servers to connect, in Claude Code's .mcp.json shape ({"mcpServers": {...}}); repeatable, a later file's server replaces an earlier one of the same name`)
	pos, err := a.parse(fs, execSynopsis, execExamples, args)
	if err != nil {
		return err
	}
	outFormat, err := sink.ParseFormat(*format)
	if err != nil {
		return usagef("exec: --output-format %w", err)
	}
	if *fork && *session == "" && !*cont {
		return usagef("exec: --fork needs --session NAME or --continue")
	}
	if *session != "" && *cont {
		return usagef("exec: --session and --continue exclude each other")
	}
	if *script != "" {
		if ov.Provider != "" && ov.Provider != "scripted" {
			return usagef("exec: --script needs the scripted provider, not %q", ov.Provider)
		}
		ov.Provider = "scripted"
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	log, err := a.newLogger(a.stderr(), first(*logFormat, cfg.LogFormat), cfg.LogLevel)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }() // stderr sync errors are not actionable
	workspace := *cwd
	if workspace == "" {
		if workspace, err = os.Getwd(); err != nil {
			return err
		}
	}
	if workspace, err = filepath.Abs(workspace); err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(workspace); err == nil {
		workspace = real
	}
	mcpConfigs, mcpSecrets, err := loadMCPConfigs(mcpFiles)
	if err != nil {
		return err
	}
	// Every file of the session is written through files, which masks the API keys and
	// the values the MCP servers read from the environment.
	files := sink.NewFiles(append(cfg.keys(), mcpSecrets...))
	store := agent.ProjectStore{Root: filepath.Join(cfg.Home, "projects", agent.ProjectKey(workspace)), Files: files}
	if *list {
		return store.List(a.Stdout)
	}
	prompt := strings.Join(pos, " ")
	if prompt == "" && !a.stdinTTY() {
		b, err := io.ReadAll(a.Stdin)
		if err != nil {
			return fmt.Errorf("read stdin: %w", err)
		}
		prompt = strings.TrimSpace(string(b))
	}
	if prompt == "" {
		return usagef("exec: no prompt: give it as an argument or on stdin")
	}
	id, err := store.Choose(*session, *cont, *fork, time.Now())
	if errors.Is(err, agent.ErrSessionName) || errors.Is(err, agent.ErrNoSession) {
		return usagef("exec: %w", err)
	}
	if err != nil {
		return err
	}
	dir := filepath.Join(store.Root, id)
	pol, err := resolvePolicy(dir, first(*bashMode, cfg.BashMode), *sandboxLevel)
	if err != nil {
		return err
	}
	provs := providers.New(cfg.providers(), ov, log)
	defer provs.Close()
	// An attempt's idle bound is half the session's idle timeout: 5 minutes.
	prov, choice, err := provs.Provider(jobs.Session{Key: id, Settings: jobs.Resolved{Script: *script, IdleTimeout: 10 * time.Minute}}, nil)
	if err != nil {
		return err
	}
	var tools []string
	if *toolList != "" {
		for _, t := range strings.Split(*toolList, ",") {
			tools = append(tools, strings.TrimSpace(t))
		}
	}
	mode := pol.BashMode
	acfg := agent.Config{SessionID: id, JobID: "exec",
		Provenance: protocol.Provenance{Provider: choice.Name, Model: choice.Model, Attempt: 1, Version: version()},
		MaxTurns:   *maxTurns, MaxTokens: *maxTokens, System: *system, Tools: tools, Workspace: workspace,
		Home: cfg.UserHome, BashMode: mode, ToolTimeout: *toolTimeout, ProcEnv: a.toolEnviron(),
		InstructionHome: cfg.Home, Skills: skills, Compaction: cfg.Compact.config(*maxContext)}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("session folder: %w", err)
	}
	events, err := sink.OpenEvents(filepath.Join(dir, agent.EventsFile), time.Now)
	if err != nil {
		return err
	}
	out, err := a.formatSink(outFormat)
	if err != nil {
		_ = events.Close() // err is what is reported
		return err
	}
	redactor := files.Sink(sink.Multi(events, out))
	messages := &agent.DirStore{Dir: dir, Files: files}
	defer func() { _ = messages.Close() }() // best effort: every append was already written
	reaping := startReaper(a.Self, log)
	defer reaping.close()
	if err := pol.save(dir, files); err != nil {
		_ = redactor.Close() // err is what is reported
		return err
	}
	locked := sink.NewLocked(redactor) // the agent, and the proxy's violations
	sb, err := runner.OpenSandbox(runner.SandboxRequest{Level: pol.Level, BashMode: mode, Workspace: workspace,
		Home: cfg.UserHome, Env: runner.ToolEnv(reaping.environ(a.toolEnviron()), nil), ToolTimeout: *toolTimeout,
		Hidden: []string{cfg.Home}}, runner.SandboxOptions{Binary: a.Self}, sandbox.Probe(), nil,
		func(v netproxy.Violation) {
			if err := runner.WriteViolation(locked, v); err != nil {
				log.Warn("write sandbox_violation", zap.Error(err))
			}
		})
	if err != nil {
		_ = redactor.Close() // err is what is reported
		return usageError{err}
	}
	defer func() {
		if err := sb.Close(); err != nil {
			log.Warn("close worker", zap.Error(err))
		}
	}()
	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *timeout > 0 {
		var cancel context.CancelFunc
		sigCtx, cancel = context.WithTimeoutCause(sigCtx, *timeout, runner.ErrSessionTimeout)
		defer cancel()
	}
	start := time.Now()
	servers := runner.OpenMCP(sigCtx, mcpConfigs, sb, func() {}, version())
	defer func() {
		if err := servers.Close(); err != nil {
			log.Warn("close MCP servers", zap.Error(err))
		}
	}()
	acfg.Sandbox, acfg.MCPServers = sb.Planned(), servers.Statuses()
	sess, err := agent.New(acfg, agent.Deps{Provider: prov, Sink: locked, Store: messages, Groups: reaping.groups(),
		Tools: sb.Client(), Servers: runner.ServerTools(servers)})
	if err != nil {
		_ = redactor.Close() // err is what is reported
		return usageError{err}
	}
	var res protocol.Result
	if err := sess.Start(); err != nil {
		res = protocol.Result{Status: protocol.StatusCrashed, Error: &protocol.Error{Kind: protocol.ErrInternal, Message: err.Error()}}
	} else if runner.AttachMCP(servers, locked); runner.MCPDown(servers) != nil && sigCtx.Err() == nil {
		res = protocol.Result{Status: protocol.StatusMCP, Error: runner.MCPDown(servers), Checks: []protocol.Check{}}
	} else {
		o := sess.Run(sigCtx, prompt)
		res = runner.ResultOf(sigCtx, o)
	}
	res.SessionID, res.JobID, res.Attempts = id, "exec", 1
	if err := servers.Close(); err != nil {
		log.Warn("close MCP servers", zap.Error(err))
	}
	res.MCPServers = servers.Statuses()
	if err := sb.Close(); err != nil {
		log.Warn("close worker", zap.Error(err))
	}
	res.Sandbox = sb.Info()
	res.DurationMS = time.Since(start).Milliseconds()
	res.IsError = res.Status != protocol.StatusSuccess
	werr := locked.Write(protocol.Message{Kind: protocol.KindResult, Final: &res})
	if cerr := locked.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write events: %w", werr)
	}
	switch {
	case sigCtx.Err() != nil && ctx.Err() == nil && res.Status == protocol.StatusCancelled:
		return exitError{code: exitInterrupted}
	case res.Status != protocol.StatusSuccess:
		return exitError{code: exitFailed}
	}
	return nil
}

// loadMCPConfigs reads the --mcp-config files, a later file's server replacing an
// earlier one of the same name, and reads their ${VAR} values, which are secrets.
func loadMCPConfigs(paths []string) ([]mcpclient.Config, []string, error) {
	var servers []jobs.MCPServer
	for _, p := range paths {
		list, err := jobs.LoadMCPConfig(p, os.LookupEnv)
		var se *jobs.SpecError
		if errors.As(err, &se) {
			return nil, nil, usageError{errors.New("invalid MCP config:\n" + se.Error())}
		}
		if err != nil {
			return nil, nil, usageError{err}
		}
		for _, m := range list {
			servers = slices.DeleteFunc(servers, func(o jobs.MCPServer) bool { return o.Name == m.Name })
			servers = append(servers, m)
		}
	}
	configs, secrets, err := runner.MCPConfigs(servers, os.LookupEnv)
	if err != nil {
		return nil, nil, usageError{err}
	}
	return configs, secrets, nil
}
