package sink

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/textcut"
)

// Limits of the one-line forms in text logs.
const (
	maxCallArg      = 80  // runes of a tool call's main argument
	maxPreviewLines = 3   // lines of a result preview
	maxPreviewRunes = 200 // runes of a result preview
)

// Clean makes s safe to print on one terminal line: ANSI escape sequences, carriage
// returns and other control characters (but tabs) are removed and invalid UTF-8 becomes
// U+FFFD. Newlines are kept; callers split on them.
func Clean(s string) string {
	ok := utf8.ValidString(s)
	for i := 0; ok && i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
			ok = false
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			i = skipEscape(s, i)
		case (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f:
			i++
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r) // RuneError for an invalid byte
			i += size
		}
	}
	return b.String()
}

// skipEscape returns the index after the escape sequence that starts at s[i]: a CSI
// sequence (ESC [ params final), or ESC and the one byte after it.
func skipEscape(s string, i int) int {
	i++
	if i < len(s) && s[i] == '[' {
		for i++; i < len(s); i++ {
			if c := s[i]; c >= 0x40 && c <= 0x7e {
				return i + 1
			}
		}
		return i
	}
	if i < len(s) {
		i++
	}
	return i
}

// fold puts s on one line of at most n runes: runs of white space become one space, and
// a longer text is cut with "…".
func fold(s string, n int) string {
	return textcut.ClipRunes(strings.Join(strings.Fields(Clean(s)), " "), n, textcut.Ellipsis)
}

// callSummary returns the one-line form of a tool call: Name(main argument).
func callSummary(c protocol.ToolCall) string {
	name := fold(c.Name, 40)
	if c.Name == "TodoWrite" {
		if s, ok := todoSummary(c.Input); ok {
			return name + "(" + s + ")"
		}
	}
	members := protocol.InputMembers(c.Input)
	if members == nil && strings.TrimSpace(c.Input) != "" && strings.TrimSpace(c.Input) != "{}" {
		return name + "(" + fold(c.Input, maxCallArg) + ")" // not a JSON object: show it
	}
	for _, key := range [...]string{"command", "file_path", "pattern", "path", "url", "query", "name",
		"description", "prompt", "skill"} {
		for _, kv := range members {
			if kv[0] == key {
				return name + "(" + fold(kv[1], maxCallArg) + ")"
			}
		}
	}
	if len(members) > 0 {
		return name + "(" + fold(members[0][1], maxCallArg) + ")"
	}
	return name + "()"
}

// todoSummary returns "completed/total" for a TodoWrite input.
func todoSummary(input string) (string, bool) {
	var in struct {
		Todos []struct {
			Status string `json:"status"`
		} `json:"todos"`
	}
	if err := json.Unmarshal([]byte(input), &in); err != nil || in.Todos == nil {
		return "", false
	}
	done := 0
	for _, t := range in.Todos {
		if t.Status == "completed" {
			done++
		}
	}
	return strconv.Itoa(done) + "/" + strconv.Itoa(len(in.Todos)), true
}

// preview returns the first lines of s for a result preview: at most maxPreviewLines
// lines and maxPreviewRunes runes, then "… +N lines" when lines were left out. With tail
// set it shows the last lines instead, for the output of a failed check.
func preview(s string, tail bool) []string {
	lines := strings.Split(strings.TrimRight(Clean(s), " \t\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	if len(lines) == 0 {
		return []string{"(no output)"}
	}
	var out []string
	if tail && len(lines) > maxPreviewLines {
		skipped := len(lines) - maxPreviewLines
		out = append(out, "… "+plural(skipped, "earlier line"))
		lines = lines[skipped:]
	}
	shown, left := 0, maxPreviewRunes
	for _, l := range lines {
		if shown == maxPreviewLines || left <= 0 {
			break
		}
		l = strings.TrimRight(l, " \t")
		if c := utf8.RuneCountInString(l); c > left {
			l = textcut.ClipRunes(l, left, textcut.Ellipsis)
			left = 0
		} else {
			left -= c
		}
		out = append(out, l)
		shown++
	}
	if rest := len(lines) - shown; rest > 0 {
		out = append(out, "… +"+plural(rest, "line"))
	}
	return out
}

// thousands formats n with comma separators: 1,234,567.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// millis formats a duration in milliseconds for people: 850ms, 3.2s, 1m5s.
func millis(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + "ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
	}
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}

// tokens formats input and output token counts: "1,234 in / 567 out".
func tokens(in, out int64) string {
	return thousands(in) + " in / " + thousands(out) + " out"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
