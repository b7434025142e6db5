package scripted

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/textcut"
)

// DemoFile is the file the demo policy writes when the Write tool is offered.
const DemoFile = "AGENTRUN_DEMO.md"

// demoStep is the demo policy's answer at step: explore the workspace, write DemoFile
// describing the task, show it, then summarise, skipping what the offered tools
// cannot do. It is a pure function of the request, so it needs no state.
func demoStep(req protocol.Request, step int) Step {
	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t.Name] = true
	}
	task := clip(firstUserText(req.Messages), 200)
	var plan []Step
	var did []string
	switch {
	case offered["Glob"]:
		plan = append(plan, callStep("Glob", jsonObject("pattern", "**/*")))
		did = append(did, "listed the workspace")
	case offered["Bash"]:
		plan = append(plan, callStep("Bash", jsonObject("command", "ls -la")))
		did = append(did, "listed the workspace")
	case offered["Read"]:
		plan = append(plan, callStep("Read", jsonObject("path", "README.md")))
		did = append(did, "read README.md")
	}
	if offered["Write"] {
		plan = append(plan, callStep("Write", jsonObject("path", DemoFile, "content", demoContent(task))))
		did = append(did, "wrote "+DemoFile)
		switch {
		case offered["Bash"]:
			plan = append(plan, callStep("Bash", jsonObject("command", "cat "+DemoFile)))
			did = append(did, "checked it with cat")
		case offered["Read"]:
			plan = append(plan, callStep("Read", jsonObject("path", DemoFile)))
			did = append(did, "read it back")
		}
	}
	plan = append(plan, Step{Text: demoSummary(task, did, fileNames(req.Messages)), Stop: protocol.StopEndTurn})
	st := plan[min(step, len(plan)-1)]
	if step == 0 {
		st.Thinking = "The task is: " + task + "\nI am agentrun's demo policy, so I will look around, " +
			"note the task in " + DemoFile + ", check the file and summarise what I did."
	}
	return st
}

func callStep(name, input string) Step {
	return Step{ToolCalls: []ToolCall{{Name: name, Input: input}}, Stop: protocol.StopToolUse}
}

func demoContent(task string) string {
	return "# agentrun demo\n\nTask:\n\n> " + strings.ReplaceAll(task, "\n", "\n> ") +
		"\n\nThis file was written by agentrun's built-in scripted model, the demo policy that answers " +
		"when no API key is configured. Set ANTHROPIC_API_KEY or OPENAI_API_KEY to use a real model.\n"
}

func demoSummary(task string, did, files []string) string {
	var b strings.Builder
	b.WriteString("This is agentrun's built-in demo model (no API key is configured).")
	if task != "" {
		b.WriteString(" You asked: " + task)
	}
	if len(did) > 0 {
		b.WriteString("\nI " + joinList(did) + ".")
	} else {
		b.WriteString("\nNo tools were offered, so I only answer in text.")
	}
	if len(files) > 0 {
		b.WriteString("\nFiles seen: " + strings.Join(files, ", ") + ".")
	}
	return b.String()
}

func joinList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// jsonObject returns the compact JSON object of key/value string pairs, in order.
func jsonObject(kv ...string) string {
	buf := []byte{'{'}
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = protocol.AppendJSONString(buf, kv[i])
		buf = append(buf, ':')
		buf = protocol.AppendJSONString(buf, kv[i+1])
	}
	return string(append(buf, '}'))
}

// firstUserText is the text of the first real user message.
func firstUserText(turns []protocol.Turn) string {
	for _, t := range turns {
		if t.IsUserText() {
			if s := turnText(t); !strings.Contains(s, CompactMarker) {
				return s
			}
		}
	}
	return ""
}

func turnText(t protocol.Turn) string {
	var texts []string
	for _, b := range t.Blocks {
		if b.Type == protocol.BlockText {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// clip shortens s to at most n runes, trimmed, marking a cut with "…".
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return strings.TrimSpace(s[:textcut.RuneLen(s, n)]) + textcut.Ellipsis
}

// fileLike matches words that look like file names: a name with an extension.
var fileLike = regexp.MustCompile(`^(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7}$`)

// wordBreak separates the words of a tool result.
func wordBreak(r rune) bool {
	return unicode.IsSpace(r) || strings.ContainsRune(`'"()[]{},;:<>|=`+"`", r)
}

// maxFiles bounds the file names a summary mentions.
const maxFiles = 12

// fileNames returns the distinct file names mentioned in the tool results of turns,
// in order of appearance, at most maxFiles.
func fileNames(turns []protocol.Turn) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range turns {
		for _, b := range t.Blocks {
			if b.Type != protocol.BlockToolResult {
				continue
			}
			for _, w := range strings.FieldsFunc(b.Content, wordBreak) {
				name := strings.TrimRight(w, ".")
				if !seen[name] && fileLike.MatchString(name) {
					seen[name] = true
					out = append(out, name)
					if len(out) == maxFiles {
						return out
					}
				}
			}
		}
	}
	return out
}
