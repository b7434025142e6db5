package scripted

import (
	"strconv"
	"strings"

	"github.com/agentrun/agentrun/protocol"
)

// isCompaction reports whether the last user message of req contains CompactMarker.
func isCompaction(req protocol.Request) bool {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if t := req.Messages[i]; t.Role == protocol.RoleUser {
			return strings.Contains(turnText(t), CompactMarker)
		}
	}
	return false
}

// compactStep answers a compaction request with the five summary fields, built from
// the conversation: the first and the latest user request, the tool calls made, the
// files the tool results mention, and the last tool result.
func compactStep(req protocol.Request) Step {
	latest := ""
	for _, t := range req.Messages {
		if t.IsUserText() {
			if s := turnText(t); !strings.Contains(s, CompactMarker) {
				latest = s
			}
		}
	}
	var names []string
	counts := map[string]int{}
	lastResult := ""
	for _, t := range req.Messages {
		for _, b := range t.Blocks {
			switch b.Type {
			case protocol.BlockToolUse:
				if counts[b.Name] == 0 {
					names = append(names, b.Name)
				}
				counts[b.Name]++
			case protocol.BlockToolResult:
				lastResult = b.Content
			case protocol.BlockText, protocol.BlockThinking, protocol.BlockRedactedThinking:
			}
		}
	}
	progress := "no tool calls yet"
	if len(names) > 0 {
		parts := make([]string, len(names))
		total := 0
		for i, n := range names {
			parts[i] = n + " ×" + strconv.Itoa(counts[n])
			total += counts[n]
		}
		progress = strconv.Itoa(total) + " tool calls: " + strings.Join(parts, ", ")
	}
	evidence := "none"
	if files := fileNames(req.Messages); len(files) > 0 {
		evidence = "files seen: " + strings.Join(files, ", ")
	}
	if lastResult != "" {
		first, _, _ := strings.Cut(strings.TrimSpace(lastResult), "\n")
		evidence += "; last result: " + clip(first, 120)
	}
	text := "Task focus: " + orNone(clip(firstUserText(req.Messages), 200)) +
		"\nLatest request: " + orNone(clip(latest, 200)) +
		"\nProgress: " + progress +
		"\nTool evidence: " + evidence +
		"\nReflections: summary written by agentrun's scripted model from " +
		strconv.Itoa(len(req.Messages)) + " messages."
	return Step{Text: text, Stop: protocol.StopEndTurn}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
