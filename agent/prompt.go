package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// promptParts is the system prompt in layers. The cached part (identity … selected
// skills, then the job's instructions) is the same for every session of a job, so
// sessions started together share one prompt-cache entry; the tail (the environment,
// which names the session's own workspace, notices and the compaction summary) comes
// after the breakpoint.
type promptParts struct {
	stable string // identity … selected skills
	env    string
	notes  []string
	job    string

	// The last rendering of the tail and the summary it was made with: it only changes
	// when compaction changes the summary.
	cached, tail, tailFor string
	done                  bool
}

// section renders one layer as "<tag>\ncontent\n</tag>", or "" when content is empty.
func section(tag, content string) string {
	content = strings.TrimRight(content, "\r\n")
	if strings.TrimSpace(content) == "" {
		return ""
	}
	return "<" + tag + ">\n" + content + "\n</" + tag + ">"
}

func joinSections(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n")
}

// system returns the system prompt with summary, in its cached part and its tail,
// rendering them again only when the summary changed.
func (p *promptParts) system(summary string) (cached, tail string) {
	if !p.done || p.tailFor != summary {
		p.cached, p.tail = p.render(summary)
		p.tailFor, p.done = summary, true
	}
	return p.cached, p.tail
}

// render returns the system prompt with the current summary.
func (p *promptParts) render(summary string) (cached, tail string) {
	notes := ""
	if len(p.notes) > 0 {
		notes = section("notice", strings.Join(p.notes, "\n"))
	}
	return joinSections(p.stable, section("job-instructions", p.job)),
		joinSections(section("environment", p.env), notes, section("context-snapshot", summary))
}

const identityText = "You are agentrun, a coding agent running unattended in a batch, CI or scheduled job. " +
	"No human is watching: do not ask questions, make reasonable decisions yourself, and finish the task with the tools you have."

const rulesText = `- Be concise. No pleasantries, no filler.
- Look before you change: read the code you edit and make exact, minimal edits that keep it building.
- Check your work with the project's own commands (build, tests, linters) when you can.
- Report failures plainly: if something could not be done, say what and why instead of pretending.
- Never print, copy or store secrets such as API keys or tokens.
- Stay inside the workspace unless the task needs more and the policy allows it.
- Your last message is the job's result: end with a short summary of what you did and what remains.`

// toolGuidance holds one line of advice per tool.
var toolGuidance = map[string]string{
	"Read":      "- Read shows a file with line numbers; use offset and limit for large files instead of reading them whole.",
	"Write":     "- Write creates or overwrites a whole file (parent folders are created). Prefer Edit for changes to existing files.",
	"Edit":      "- Edit replaces old_string with new_string exactly; old_string must match once, so include enough context, or set replace_all.",
	"Bash":      "- Bash runs one command with bash -c in the workspace, with a time limit; stdout, stderr and the exit code come back. Each call is a fresh process.",
	"Glob":      "- Glob lists files matching a pattern (** spans folders), newest first, skipping .git and ignored files.",
	"Grep":      "- Grep searches file contents with a regular expression; use context lines rather than reading whole files to find your way.",
	"TodoWrite": "- TodoWrite keeps a checklist for multi-step work: send the whole list each time, with at most one item in progress.",
	"Task":      "- Task gives a self-contained sub-task to a sub-agent with its own context and a share of your budget; its final answer comes back as the tool result.",
}

const subAgentText = `Use Task for work that is separable and would fill your context: a broad search, a survey of many files, an independent fix.
Give the sub-agent everything it needs in its prompt: it cannot see this conversation. Ask for a short, concrete result.
Do not delegate what a single tool call does. A failed sub-agent reports failure; decide yourself how to continue.`

// buildPrompt renders the stable layers for a session offering toolNames.
func buildPrompt(cfg Config, toolNames []string) (promptParts, error) {
	var guidance []string
	offered := map[string]bool{}
	for _, n := range toolNames {
		offered[n] = true
		if g, ok := toolGuidance[n]; ok {
			guidance = append(guidance, g)
		}
	}
	if len(toolNames) > 1 {
		guidance = append(guidance, "- Several independent tool calls may go in one response; they run one after another, in order.")
	}
	env := fmt.Sprintf("workspace: %s\nplatform: %s/%s\nshell: bash (non-login; every Bash call is a new process)\nbash_mode: %s (digits: system, external, network, workspace; bits: 4 read, 2 write, 1 execute)",
		cfg.Workspace, runtime.GOOS, runtime.GOARCH, cfg.BashMode)
	subGuide := ""
	if offered[TaskToolName] {
		subGuide = section("sub-agent-guidance", subAgentText)
	}
	instr, err := instructionFiles(cfg)
	if err != nil {
		return promptParts{}, err
	}
	index, selected, err := skillSections(cfg)
	if err != nil {
		return promptParts{}, err
	}
	stable := joinSections(
		section("agent-identity", identityText),
		section("rules", rulesText),
		section("using-your-tools", strings.Join(guidance, "\n")),
		subGuide,
		section("instruction-files", instr),
		section("skill-index", index),
		section("selected-skills", selected),
	)
	return promptParts{stable: stable, env: env, job: cfg.System}, nil
}

// instructionCandidates are the instruction file names, first existing one wins.
var instructionCandidates = []string{"AGENTS.md", "AGENT.md", "CLAUDE.md", filepath.Join(".claude", "CLAUDE.md")}

// instructionFiles renders the global (InstructionHome) then project (Workspace) files.
func instructionFiles(cfg Config) (string, error) {
	var parts []string
	for _, place := range []struct{ name, dir string }{{"global", cfg.InstructionHome}, {"project", cfg.Workspace}} {
		if place.dir == "" {
			continue
		}
		for _, cand := range instructionCandidates {
			b, err := os.ReadFile(filepath.Join(place.dir, cand))
			if err != nil {
				continue
			}
			parts = append(parts, fmt.Sprintf("<instruction-file name=%s>\n%s\n</instruction-file>",
				jsonQuote(place.name), strings.TrimRight(string(b), "\r\n")))
			break
		}
	}
	return strings.Join(parts, "\n"), nil
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// skill is one SKILL.md found on disk.
type skill struct {
	name, dir, summary string
}

// skillDirs lists the folders searched for skills, in priority order.
func skillDirs(cfg Config) []string {
	var dirs []string
	if cfg.Workspace != "" {
		dirs = append(dirs, filepath.Join(cfg.Workspace, ".claude", "skills"), filepath.Join(cfg.Workspace, "skills"))
	}
	if cfg.InstructionHome != "" {
		dirs = append(dirs, filepath.Join(cfg.InstructionHome, "skills"))
	}
	if cfg.Home != "" {
		dirs = append(dirs, filepath.Join(cfg.Home, ".claude", "skills"))
	}
	return dirs
}

// findSkills returns the skills of every folder; the first folder wins a name.
func findSkills(cfg Config) []skill {
	seen := map[string]bool{}
	var out []skill
	for _, root := range skillDirs(cfg) {
		entries, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range entries {
			dir := filepath.Join(root, e.Name())
			if seen[e.Name()] {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, "SKILL.md")); err != nil {
				continue
			}
			seen[e.Name()] = true
			out = append(out, skill{name: e.Name(), dir: dir, summary: skillSummary(filepath.Join(dir, "SKILL.md"))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// skillSummary is the first non-empty line that is not a heading or front-matter fence.
func skillSummary(path string) string {
	return firstLine(path, func(line string) bool { return line == "---" || strings.HasPrefix(line, "#") })
}

// skillSections renders the skill index and the selected skills.
func skillSections(cfg Config) (index, selected string, err error) {
	found := findSkills(cfg)
	byName := map[string]skill{}
	var lines []string
	for _, s := range found {
		byName[s.name] = s
		lines = append(lines, fmt.Sprintf("- %s: %s", s.name, s.summary))
	}
	var sel []string
	for _, name := range cfg.Skills {
		s, ok := byName[name]
		if !ok {
			return "", "", fmt.Errorf("skill %q not found in %s", name, strings.Join(skillDirs(cfg), ", "))
		}
		b, err := os.ReadFile(filepath.Join(s.dir, "SKILL.md"))
		if err != nil {
			return "", "", fmt.Errorf("skill %q: %w", name, err)
		}
		body := strings.NewReplacer("${AGENTRUN_SKILL_DIR}", s.dir, "${BASH_AGENT_SKILL_DIR}", s.dir).Replace(string(b))
		sel = append(sel, fmt.Sprintf("<skill name=%s>\nBase directory: %s\n\n%s\n</skill>", jsonQuote(name), s.dir, strings.TrimRight(body, "\r\n")))
	}
	return strings.Join(lines, "\n"), strings.Join(sel, "\n"), nil
}
