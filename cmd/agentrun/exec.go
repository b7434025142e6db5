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

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/providers"
	"github.com/agentrun/agentrun/runner"
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
	maxTurns := fs.Int("max-turns", jobs.DefaultMaxTurns, "model calls at most")
	maxTokens := fs.Int("max-tokens", jobs.DefaultMaxTokens, "output tokens per model call")
	toolTimeout := fs.Duration("tool-timeout", jobs.DefaultToolTimeout, "default time limit of one Bash call")
	timeout := fs.Duration("timeout", 0, "wall-clock limit of the session (0: none)")
	idleTimeout := fs.Duration("idle-timeout", jobs.DefaultIdleTimeout, "end the session after this long without activity (a stalled model request is retried first)")
	maxContext := fs.Int("max-context", 200000, "context budget in tokens; compaction keeps the window under it")
	bashMode := fs.String("bash-mode", "", "safety policy, four octal digits (default $AGENTRUN_BASH_MODE, else "+jobs.DefaultBashMode+")")
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
	tools, err := toolsFlag(*toolList)
	if err != nil {
		return err
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
	servers, mcpSecrets, err := a.loadMCPConfigs(mcpFiles)
	if err != nil {
		return err
	}
	// The session store's own files (a fork's copies, the policy) mask the API keys and
	// the values the MCP servers read from the environment, as the runner's do.
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
	if *script != "" {
		if *script, err = filepath.Abs(*script); err != nil {
			return err
		}
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
	// The session the flags describe: one job, "exec", in the workspace itself.
	s := jobs.Session{Key: id, JobID: "exec", Repeat: 1, Repeats: 1, Matrix: map[string]string{}, Prompt: prompt,
		System: *system, Checks: []jobs.Check{}, Settings: jobs.Resolved{
			MaxTurns: *maxTurns, MaxTokens: *maxTokens, Timeout: *timeout, IdleTimeout: *idleTimeout,
			ToolTimeout: *toolTimeout, Tools: tools, BashMode: pol.BashMode,
			Sandbox:   jobs.Sandbox{Level: jobs.SandboxLevel(pol.Level)},
			Workspace: jobs.Workspace{Dir: workspace, Mode: jobs.WorkspaceShared},
			Env:       map[string]string{}, Secrets: []string{}, Skills: skills, MaxContext: *maxContext,
			Script: *script, MCPServers: servers,
		}}
	provs := providers.New(cfg.providers(), ov, log)
	defer provs.Close()
	// A missing key or a broken script is a usage error before anything runs.
	if _, err := provs.Check([]jobs.Session{s}); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("session folder: %w", err)
	}
	if err := pol.save(dir, files); err != nil {
		return err
	}
	reaping := startReaper(a.Self, log)
	defer reaping.close()
	r := runner.New(runner.Options{
		Log: log, Providers: provs, Resolve: provs.Resolve, Secrets: cfg.keys(), LookupEnv: a.lookupEnv,
		Environ: reaping.environ(a.toolEnviron(cfg.UserHome)), Groups: reaping.groups(),
		Home: cfg.UserHome, AccountHome: cfg.AccountHome, InstructionHome: cfg.Home, Version: version(), Compaction: cfg.Compact.config(0),
	})
	stdout := func() (sink.Sink, error) { return a.formatSink(outFormat) }
	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := r.RunSession(sigCtx, s, dir, runner.SessionOptions{SessionID: id, Persistent: true, Stdout: stdout})
	if errors.Is(err, runner.ErrSandbox) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	interrupted := sigCtx.Err() != nil && ctx.Err() == nil
	return exitError{code: runner.ExitCode(res, interrupted)}
}

// toolsFlag reads --tools: comma-separated tool names, all of them when empty.
func toolsFlag(list string) ([]jobs.Tool, error) {
	if list == "" {
		return jobs.AllTools(), nil
	}
	var tools []jobs.Tool
	for _, name := range strings.Split(list, ",") {
		t := jobs.Tool(strings.TrimSpace(name))
		if !slices.Contains(jobs.AllTools(), t) {
			return nil, usagef("exec: --tools: unknown tool %q: want some of %s", t, joinTools(jobs.AllTools()))
		}
		tools = append(tools, t)
	}
	return tools, nil
}

func joinTools(tools []jobs.Tool) string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// loadMCPConfigs reads the --mcp-config files, a later file's server replacing an
// earlier one of the same name, and the ${VAR} values they read, which are secrets.
func (a *App) loadMCPConfigs(paths []string) ([]jobs.MCPServer, []string, error) {
	var servers []jobs.MCPServer
	for _, p := range paths {
		list, err := jobs.LoadMCPConfig(p, a.lookupEnv)
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
	_, secrets, err := runner.MCPConfigs(servers, a.lookupEnv)
	if err != nil {
		return nil, nil, usageError{err}
	}
	return servers, secrets, nil
}
