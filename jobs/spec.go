// Package jobs parses agentrun's YAML job specs strictly, reporting every problem of a
// file with its line and column, and expands a valid spec into the sorted, fully resolved
// sessions that a run executes.
package jobs

import (
	"encoding/json"
	"time"
)

// Version is the only job spec format version this package reads.
const Version = 1

// DefaultConcurrency is the number of sessions run at once when the spec does not say.
const DefaultConcurrency = 4

// Spec is one parsed job spec file. Parse fills it; Sessions expands it.
type Spec struct {
	Version     int              `yaml:"version" required:"true" const:"1" doc:"Format version of the job spec; must be 1."`
	Concurrency int              `yaml:"concurrency" limit:"positive" doc:"Sessions run at once (default 4); the --concurrency flag overrides it."`
	Defaults    Settings         `yaml:"defaults" doc:"Settings every job inherits, field by field; a job's own settings win."`
	Budget      Budget           `yaml:"budget" doc:"Run-level limits summed over all sessions; the run stops starting sessions when one is reached."`
	Prices      map[string]Price `yaml:"prices" doc:"Price overrides by model name (exact name or prefix), in USD per million tokens; they win over the built-in table."`
	Telemetry   Telemetry        `yaml:"telemetry" doc:"OpenTelemetry export, which the standard OTEL_* environment variables turn on: what the spec adds to it."`
	Jobs        []Job            `yaml:"jobs" required:"true" limit:"nonempty" doc:"The jobs of the run; each expands into one or more sessions."`

	file string              // path given to Parse, for messages
	dir  string              // absolute directory of the spec file
	pos  map[string]position // field path → position of its value (or key)
}

// File returns the path of the spec file as given to Parse.
func (s *Spec) File() string { return s.file }

// Dir returns the absolute directory of the spec file, against which relative paths
// (prompt_file, script, workspace.dir, sandbox.writable and sandbox.readable) resolve.
func (s *Spec) Dir() string { return s.dir }

// Job is one entry of the spec's jobs list. Its settings override the spec's defaults.
type Job struct {
	ID           string              `yaml:"id" required:"true" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]*$" doc:"Unique job identifier: letters, digits, '.', '_' and '-', starting with a letter or digit. It starts every session key."`
	Prompt       string              `yaml:"prompt" limit:"nonempty" doc:"The task, as a text/template: {{ .matrix.NAME }}, {{ .repeat }}, {{ .job }} and {{ .key }} are available. Exactly one of prompt and prompt_file."`
	PromptFile   string              `yaml:"prompt_file" limit:"nonempty" doc:"File holding the prompt template, relative to the spec file's directory. Exactly one of prompt and prompt_file."`
	System       string              `yaml:"system" doc:"Extra system instructions appended to the built-in ones; a text/template like prompt."`
	Checks       []Check             `yaml:"checks" doc:"Commands run in the workspace after the agent stops; every one must exit 0 for the session to succeed."`
	OutputSchema json.RawMessage     `yaml:"output_schema" doc:"JSON Schema (written as YAML) that the final answer must match as JSON."`
	Repeat       int                 `yaml:"repeat" limit:"positive" doc:"Number of independent sessions per matrix combination (default 1); keys get .r1, .r2, … when above 1."`
	Matrix       map[string][]string `yaml:"matrix" scalars:"any" keys:"matrix" limit:"nonempty" doc:"One session per combination of values. A name that is a setting (model, provider, max_turns, thinking.effort, …) overrides that setting."`
	Settings     `yaml:",inline"`

	filePrompt string // content of PromptFile, read by Parse
}

// Check is a command run in the session's workspace after the agent stops.
type Check struct {
	Name    string        `yaml:"name" json:"name" required:"true" limit:"nonempty" doc:"Name of the check, unique within its job."`
	Run     string        `yaml:"run" json:"run" required:"true" limit:"nonempty" doc:"Shell command; the check passes when it exits 0."`
	Timeout time.Duration `yaml:"timeout" json:"timeout" limit:"positive" doc:"Time limit of the command (default: the session's tool_timeout)."`
}

// Settings are the inheritable settings of defaults and of a job, as written. A nil
// pointer, slice or map means the field is absent, so an explicit zero value is
// distinguishable from an absent one.
type Settings struct {
	Provider    *Provider          `yaml:"provider" doc:"Model provider; empty means the command line and environment decide."`
	Model       *string            `yaml:"model" doc:"Model name as the provider knows it."`
	BaseURL     *string            `yaml:"base_url" doc:"Provider API base URL, for compatible servers and proxies."`
	MaxTurns    *int               `yaml:"max_turns" limit:"positive" doc:"Maximum model turns per session (default 50)."`
	MaxTokens   *int               `yaml:"max_tokens" limit:"positive" doc:"Maximum output tokens per model call (default 16384)."`
	Timeout     *time.Duration     `yaml:"timeout" limit:"positive" doc:"Wall-clock limit per session (default 30m)."`
	IdleTimeout *time.Duration     `yaml:"idle_timeout" limit:"positive" doc:"Limit on a stretch with no provider byte and no tool output (default 5m)."`
	ToolTimeout *time.Duration     `yaml:"tool_timeout" limit:"positive" doc:"Default time limit of one tool call (default 10m)."`
	Tools       []Tool             `yaml:"tools" doc:"Tools offered to the model (default: all eight); an empty list offers none."`
	BashMode    *string            `yaml:"bash_mode" pattern:"^[0-7]{4}$" doc:"Safety policy: a quoted string of four octal digits for system, external, network and workspace access, read=4 write=2 execute=1 (default \"0467\")."`
	Sandbox     *SandboxSettings   `yaml:"sandbox" doc:"Kernel confinement of the tools: its level and the paths it opens besides the workspace and a private /tmp."`
	Network     *NetworkSettings   `yaml:"network" doc:"Which hosts the tools reach through the sandbox's proxy when bash_mode's network digit is not 0."`
	Budget      *BudgetSettings    `yaml:"budget" doc:"Per-session limits; the session ends with error_budget when one is reached."`
	Limits      *LimitsSettings    `yaml:"limits" doc:"Size limits of one model response, against a runaway or hostile endpoint; past one the session ends with error_max_tokens and an error of kind response_too_large."`
	Retries     *int               `yaml:"retries" limit:"nonneg" doc:"Whole-session retries after a retryable failure (default 0)."`
	Workspace   *WorkspaceSettings `yaml:"workspace" doc:"Where the agent works."`
	Env         map[string]string  `yaml:"env" scalars:"any" keys:"envname" doc:"Environment variables of tool processes and checks; a job's entries are merged over the defaults' entries."`
	Secrets     []string           `yaml:"secrets" pattern:"^[A-Za-z_][A-Za-z0-9_]*$" doc:"Names of environment variables whose values are redacted from every artifact and log; the defaults' and the job's lists are joined."`
	Thinking    *ThinkingSettings  `yaml:"thinking" doc:"Extended thinking / reasoning configuration."`
	MaxContext  *int               `yaml:"max_context" limit:"positive" doc:"Context window in tokens that triggers compaction (default: the model's)."`
	Skills      []string           `yaml:"skills" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]*$" doc:"Skills (SKILL.md directories) loaded into the system prompt by name."`
	Script      *string            `yaml:"script" doc:"Script file of the scripted provider, relative to the spec file's directory."`
	// MCPServers are connected at session start; their tools are offered as
	// mcp__<server>__<tool>.
	MCPServers map[string]MCPServerSettings `yaml:"mcp_servers" keys:"mcpname" doc:"MCP tool servers by name, connected at session start; their tools are offered as mcp__<name>__<tool>. A job's entry replaces the defaults' entry of the same name; enabled: false turns one off."`
	Cache      *CacheSettings               `yaml:"cache" doc:"Prompt caching across the sessions of a run."`
}

// CacheSettings are the prompt-cache settings as written; nil means absent.
type CacheSettings struct {
	Prime *bool `yaml:"prime" doc:"Sessions that start together with the same system prompt and tools, model and endpoint wait until the first of them has begun its answer, so that it alone writes the provider's prompt cache and the others read it (default true)."`
}

// BudgetSettings are per-session limits as written; nil means absent.
type BudgetSettings struct {
	MaxCostUSD *float64 `yaml:"max_cost_usd" limit:"positive" doc:"Cost limit in USD, computed from the price table."`
	MaxTokens  *int64   `yaml:"max_tokens" limit:"positive" doc:"Limit on input plus output tokens."`
}

// LimitsSettings bound one model response, as written; nil means absent.
type LimitsSettings struct {
	MaxResponseBytes  *int64 `yaml:"max_response_bytes" limit:"positive" doc:"Limit on the text and thinking of one response, in bytes (default 8 MiB)."`
	MaxToolInputBytes *int64 `yaml:"max_tool_input_bytes" limit:"positive" doc:"Limit on the input of one tool call, in bytes (default 4 MiB)."`
}

// WorkspaceSettings say where a session works, as written; nil means absent.
type WorkspaceSettings struct {
	Dir  *string        `yaml:"dir" doc:"Workspace directory, relative to the spec file's directory (default \".\")."`
	Mode *WorkspaceMode `yaml:"mode" doc:"shared: work in dir itself; copy: a private copy of dir per session; worktree: a checkout of the git repository of dir at HEAD per session, with a git folder of its own over the repository's objects, the session working in dir's folder of it and its changes saved as changes.patch (default copy, so that no two sessions edit one folder; shared must be written out)."`
}

// SandboxSettings confine a session's tools, as written; nil means absent.
type SandboxSettings struct {
	Level      *SandboxLevel `yaml:"level" doc:"strict, landlock or off (off must be written out); absent means the strongest level the machine supports."`
	Writable   []string      `yaml:"writable" check:"path" doc:"Extra paths the tools may write, besides the workspace and a private /tmp: absolute, ~ or ~/… (the home directory), or relative to the spec file's directory. A job's list replaces the defaults' list."`
	Readable   []string      `yaml:"readable" check:"path" doc:"Extra paths the tools may read even when bash_mode's external digit has no read bit; written like writable. A job's list replaces the defaults' list."`
	Caches     []string      `yaml:"caches" check:"path" doc:"Folders the tools may write as caches, written like writable: at level strict each session reads what the folder holds and writes into a layer of its own over it (where the kernel mounts no overlay in a user namespace, before Linux 5.11, into a folder of its own that starts empty), which goes when the session ends, so that no session can change what another session, or the user's own build, reads there (a build cache is code that the next build links). At level landlock a cache is writable, as a writable path is. A job's list replaces the defaults' list."`
	ScratchMiB *int64        `yaml:"scratch_mib" limit:"positive" doc:"Size in MiB of a session's scratch space at level strict: one tmpfs, in memory, holding its private /tmp and /dev/shm and, where the home directory is not visible, the home directory; a write past it fails with ENOSPC. Default a quarter of the machine's memory, at most 4096, and at most half of memory_mib; a larger one given beside memory_mib is an error."`
	MemoryMiB  *int64        `yaml:"memory_mib" limit:"positive" doc:"Memory limit in MiB of a session's tools, their processes and the scratch space together, held by a memory cgroup where agentrun may make one (as root); past it the kernel kills the session's largest tool process, and the session goes on. Default half of the machine's memory."`
}

// NetworkSettings limit the hosts a session's tools reach, as written; nil means absent.
type NetworkSettings struct {
	Allow []string `yaml:"allow" check:"host" doc:"Hosts reachable through the sandbox's proxy: a host name (that host only), \"*.domain\" (any host under domain), \".domain\" (domain and any host under it) or an IP address; ports are not filtered, so entries have none. Empty or absent allows any public host. An internal address (loopback, link-local such as cloud instance metadata, private, shared, multicast or reserved) is reached only for a host listed exactly, by name or IP address, not through a \"*.domain\" entry. A job's list replaces the defaults' list."`
}

// ThinkingSettings configure extended thinking, as written; nil means absent.
type ThinkingSettings struct {
	Mode   *ThinkingMode `yaml:"mode" doc:"disabled, enabled (with a token budget) or adaptive."`
	Budget *int          `yaml:"budget" limit:"positive" doc:"Thinking token budget for mode enabled."`
	Effort *Effort       `yaml:"effort" doc:"Reasoning effort: low, medium, high, xhigh or max."`
}

// Telemetry is what a spec says about the run's OpenTelemetry export.
type Telemetry struct {
	PropagateToProvider bool `yaml:"propagate_to_provider" json:"propagate_to_provider" doc:"Send the trace context (traceparent) with every model request, so a provider's or proxy's own traces join the run's; off by default, since it reaches a third party."`
}

// Budget is a pair of limits; a zero field means no limit.
type Budget struct {
	MaxCostUSD float64 `yaml:"max_cost_usd" json:"max_cost_usd" limit:"positive" doc:"Cost limit in USD, computed from the price table."`
	MaxTokens  int64   `yaml:"max_tokens" json:"max_tokens" limit:"positive" doc:"Limit on input plus output tokens."`
}

// Limits are resolved response size limits; a zero field means the default (8 MiB of
// text and thinking, 4 MiB of one tool input), so that a spec without limits keeps
// the digest it had before they existed.
type Limits struct {
	MaxResponseBytes  int64 `json:"max_response_bytes,omitempty"`
	MaxToolInputBytes int64 `json:"max_tool_input_bytes,omitempty"`
}

// Cache is a resolved prompt-cache configuration. Its zero value is the default, so a
// spec without cache settings keeps the digest it had before they existed.
type Cache struct {
	// NoPrime turns priming off (cache: {prime: false}).
	NoPrime bool `json:"no_prime,omitempty"`
}

// Workspace is a resolved workspace: an absolute directory and a mode.
type Workspace struct {
	Dir  string        `json:"dir"`
	Mode WorkspaceMode `json:"mode"`
}

// Sandbox is a resolved sandbox configuration. Paths written as ~ or ~/… are kept as
// written, for the runner to expand against the real home directory; every other path
// is absolute and clean. The lists are nil when empty, so that a spec without sandbox
// settings keeps the digests it had before they existed.
type Sandbox struct {
	// Level is empty when the strongest level the machine supports applies.
	Level    SandboxLevel `json:"level,omitempty"`
	Writable []string     `json:"writable,omitempty"`
	Readable []string     `json:"readable,omitempty"`
	Caches   []string     `json:"caches,omitempty"`
	// ScratchMiB is 0 for the default size.
	ScratchMiB int64 `json:"scratch_mib,omitempty"`
	// MemoryMiB is 0 for the default limit.
	MemoryMiB int64 `json:"memory_mib,omitempty"`
}

// Network is a resolved network allow list of host names, IP addresses, "*.domain"
// and ".domain" patterns, each in lower case. Allow is nil, allowing any host, when the
// spec lists none.
type Network struct {
	Allow []string `json:"allow,omitempty"`
}

// Thinking is a resolved thinking configuration; zero fields leave the choice to the
// provider.
type Thinking struct {
	Mode   ThinkingMode `json:"mode"`
	Budget int          `json:"budget"`
	Effort Effort       `json:"effort"`
}

// Resolved are a session's settings after inheritance: built-in defaults, then the
// spec's defaults, then the job, then the job's matrix values.
type Resolved struct {
	// Provider is empty when neither the spec nor the matrix names one: the caller decides.
	Provider    Provider      `json:"provider"`
	Model       string        `json:"model"`
	BaseURL     string        `json:"base_url"`
	MaxTurns    int           `json:"max_turns"`
	MaxTokens   int           `json:"max_tokens"`
	Timeout     time.Duration `json:"timeout"`
	IdleTimeout time.Duration `json:"idle_timeout"`
	ToolTimeout time.Duration `json:"tool_timeout"`
	// Tools is never nil; it is empty when the spec offers no tools.
	Tools    []Tool `json:"tools"`
	BashMode string `json:"bash_mode"`
	// Sandbox and Network are left out of the JSON when zero.
	Sandbox Sandbox `json:"sandbox,omitzero"`
	Network Network `json:"network,omitzero"`
	Budget  Budget  `json:"budget"`
	// Limits and Cache are left out of the JSON when zero.
	Limits  Limits `json:"limits,omitzero"`
	Cache   Cache  `json:"cache,omitzero"`
	Retries int    `json:"retries"`
	// Workspace.Dir is absolute.
	Workspace Workspace `json:"workspace"`
	// Env is never nil.
	Env map[string]string `json:"env"`
	// Secrets is sorted and free of duplicates.
	Secrets  []string `json:"secrets"`
	Thinking Thinking `json:"thinking"`
	// MaxContext is 0 when the model's own window applies.
	MaxContext int      `json:"max_context"`
	Skills     []string `json:"skills"`
	// Script is absolute, or empty when none is set.
	Script string `json:"script"`
	// MCPServers are sorted by name, without the disabled ones; nil, and left out of
	// the JSON, for none.
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
}

// Built-in defaults for settings that neither the spec's defaults nor the job set.
const (
	DefaultMaxTurns    = 50
	DefaultMaxTokens   = 16384
	DefaultTimeout     = 30 * time.Minute
	DefaultIdleTimeout = 5 * time.Minute
	DefaultToolTimeout = 10 * time.Minute
	DefaultBashMode    = "0467"
)
