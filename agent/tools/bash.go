package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentrun/agentrun/protocol"
)

// DefaultTimeout is the time limit of a Bash call when Env.Timeout is zero.
const DefaultTimeout = 10 * time.Minute

// trailerReserve is the room kept under the output cap for the status lines.
const trailerReserve = 200

// Bash is the Bash tool: it runs a command with bash -c in the workspace.
type Bash struct{}

type bashInput struct {
	Command     *string `json:"command"`
	Timeout     number  `json:"timeout"`
	Description string  `json:"description"`
}

// Spec describes Bash.
func (Bash) Spec() protocol.ToolSpec {
	return protocol.ToolSpec{
		Name: "Bash",
		Description: "Run a shell command with `bash -c` in the workspace directory (not a login shell; stdin is " +
			"/dev/null, so interactive commands fail). The reply holds stdout, then stderr after a [stderr] line, then " +
			"[exit code N] when the command failed. Long output keeps its head and tail. Commands are checked " +
			"against the bash_mode safety policy first. Processes left running when the command ends are killed; " +
			"timeout (seconds) can shorten the configured limit.",
		InputSchema: schema(`"command":{"type":"string","description":"The command to run"},`+
			`"timeout":{"type":"integer","minimum":1,"description":"Time limit in seconds (at most the configured tool timeout)"},`+
			`"description":{"type":"string","description":"What the command does, in a few words"}`, "command"),
	}
}

// Run checks the command against the policy and runs it.
func (Bash) Run(ctx context.Context, call Call) Result {
	env := call.Env
	var in bashInput
	if err := decodeInput(call.Input, &in); err != nil {
		return failure(err.Error())
	}
	if in.Command == nil || strings.TrimSpace(*in.Command) == "" {
		return failure("no command provided")
	}
	command := *in.Command
	if in.Timeout.set && in.Timeout.n < 1 {
		return failure("timeout must be at least 1 second")
	}
	if err := env.policy().CheckCommand(command, env.dirs()); err != nil {
		return failure(err.Error())
	}
	timeout := DefaultTimeout
	if env != nil && env.Timeout > 0 {
		timeout = env.Timeout
	}
	if in.Timeout.set {
		timeout = min(timeout, time.Duration(in.Timeout.n)*time.Second)
	}
	maxOut := env.maxOutput()
	res := runShell(ctx, env, command, timeout, maxOut)
	if res.startErr != nil {
		return failure("start bash: " + res.startErr.Error())
	}
	content, isErr := renderShell(res, timeout, maxOut)
	return Result{Content: content, IsError: isErr}
}

// renderShell builds the reply: stdout, "[stderr]" and stderr, then status lines.
// It returns the reply and whether the call failed.
func renderShell(res procResult, timeout time.Duration, maxOut int) (string, bool) {
	budget := max(maxOut-trailerReserve, minTruncate)
	outBudget, errBudget := splitBudget(res.stdout.kept(), res.stderr.kept(), budget)
	stdout := res.stdout.render(outBudget)
	stderr := res.stderr.render(errBudget)

	var b strings.Builder
	b.WriteString(stdout)
	if stderr != "" {
		if stdout != "" && !strings.HasSuffix(stdout, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("[stderr]\n")
		b.WriteString(stderr)
	}
	isErr := true
	switch {
	case res.timedOut:
		trailer(&b, fmt.Sprintf("[... command timed out after %s seconds ...]", seconds(timeout)))
	case res.cancelled:
		trailer(&b, "[... command cancelled ...]")
	case res.signal != "":
		trailer(&b, "[killed by signal "+res.signal+"]")
	case res.exitCode != 0:
		trailer(&b, fmt.Sprintf("[exit code %d]", res.exitCode))
	default:
		isErr = false
	}
	if res.orphanedPipes {
		trailer(&b, "[... a process that left the command's process group kept its output open; stopped reading ...]")
	}
	if b.Len() == 0 {
		return "(no output)", isErr
	}
	return b.String(), isErr
}

// trailer appends a status line on a line of its own.
func trailer(b *strings.Builder, line string) {
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(line)
}

// splitBudget shares budget between two outputs of sizes a and b: each gets at least
// half when it needs it, and what one does not need goes to the other.
func splitBudget(a, b, budget int) (int, int) {
	half := budget / 2
	switch {
	case a+b <= budget:
		return budget - b, budget - a
	case a <= half:
		return half, budget - a
	case b <= half:
		return budget - b, half
	}
	return budget - half, half
}

// seconds renders a duration in seconds without a needless fraction.
func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%d", d/time.Second)
	}
	return fmt.Sprintf("%.1f", d.Seconds())
}
