package jobs

// Provider names a model provider.
type Provider string

// The providers.
const (
	ProviderAnthropic Provider = "anthropic"
	ProviderOpenAI    Provider = "openai"
	ProviderResponses Provider = "responses"
	ProviderScripted  Provider = "scripted"
)

func (Provider) values() []string {
	return []string{string(ProviderAnthropic), string(ProviderOpenAI), string(ProviderResponses), string(ProviderScripted)}
}

// Tool names one of the agent's built-in tools.
type Tool string

// The tools.
const (
	ToolRead      Tool = "Read"
	ToolWrite     Tool = "Write"
	ToolEdit      Tool = "Edit"
	ToolBash      Tool = "Bash"
	ToolGlob      Tool = "Glob"
	ToolGrep      Tool = "Grep"
	ToolTodoWrite Tool = "TodoWrite"
	ToolTask      Tool = "Task"
)

// AllTools returns every tool in the order of the default tools list.
func AllTools() []Tool {
	return []Tool{ToolRead, ToolWrite, ToolEdit, ToolBash, ToolGlob, ToolGrep, ToolTodoWrite, ToolTask}
}

func (Tool) values() []string {
	all := AllTools()
	out := make([]string, len(all))
	for i, t := range all {
		out[i] = string(t)
	}
	return out
}

// WorkspaceMode says how a session gets its workspace.
type WorkspaceMode string

// The workspace modes.
const (
	// WorkspaceShared runs every session in the directory itself.
	WorkspaceShared WorkspaceMode = "shared"
	// WorkspaceCopy gives each session a private copy of the directory.
	WorkspaceCopy WorkspaceMode = "copy"
	// WorkspaceWorktree gives each session a checkout of the directory's repository at HEAD, with a git folder of its own.
	WorkspaceWorktree WorkspaceMode = "worktree"
)

func (WorkspaceMode) values() []string {
	return []string{string(WorkspaceShared), string(WorkspaceCopy), string(WorkspaceWorktree)}
}

// ThinkingMode says whether the model thinks before answering.
type ThinkingMode string

// The thinking modes; they match protocol.Thinking.Mode.
const (
	ThinkingDisabled ThinkingMode = "disabled"
	ThinkingEnabled  ThinkingMode = "enabled"
	ThinkingAdaptive ThinkingMode = "adaptive"
)

func (ThinkingMode) values() []string {
	return []string{string(ThinkingDisabled), string(ThinkingEnabled), string(ThinkingAdaptive)}
}

// Effort is a reasoning effort level; it matches protocol.Thinking.Effort.
type Effort string

// The effort levels.
const (
	EffortLow    Effort = "low"
	EffortMedium Effort = "medium"
	EffortHigh   Effort = "high"
	EffortXHigh  Effort = "xhigh"
	EffortMax    Effort = "max"
)

func (Effort) values() []string {
	return []string{string(EffortLow), string(EffortMedium), string(EffortHigh), string(EffortXHigh), string(EffortMax)}
}

// SandboxLevel is how strongly a session's tools are confined; it matches
// sandbox.Level. The empty level, never written in a spec, means the strongest the
// machine supports.
type SandboxLevel string

// The sandbox levels, strongest first.
const (
	SandboxStrict   SandboxLevel = "strict"
	SandboxLandlock SandboxLevel = "landlock"
	SandboxOff      SandboxLevel = "off"
)

func (SandboxLevel) values() []string {
	return []string{string(SandboxStrict), string(SandboxLandlock), string(SandboxOff)}
}

// enum is implemented by the string types whose values are a closed set.
type enum interface {
	values() []string
	what() string // the name of the set, for messages
}

func (Provider) what() string      { return "provider" }
func (Tool) what() string          { return "tool" }
func (WorkspaceMode) what() string { return "workspace mode" }
func (ThinkingMode) what() string  { return "thinking mode" }
func (Effort) what() string        { return "effort" }
func (SandboxLevel) what() string  { return "sandbox level" }
