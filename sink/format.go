package sink

import (
	"fmt"
	"io"
	"strings"

	"github.com/agentrun/agentrun/protocol"
)

// Format is an output format of a session's messages, as --output-format names it.
type Format string

// The output formats.
const (
	// FormatText is the plain-text transcript (Text); "human" names it too.
	FormatText Format = "text"
	// FormatStreamJSON is one JSON event per line (StreamJSON).
	FormatStreamJSON Format = "stream-json"
	// FormatClaude is Claude Code's stream-json (Claude).
	FormatClaude Format = "claude"
	// FormatRESP is the RESP frames (RESP).
	FormatRESP Format = "resp"
)

// formats are every format, in the order messages list them.
var formats = []Format{FormatText, FormatStreamJSON, FormatClaude, FormatRESP}

// humanName is the name exec and replay have always given the text format.
const humanName = "human"

// ParseFormat returns the format name names, if it is one of allowed (any format when
// allowed is empty); the error lists them, as in `"xml": want text, stream-json or
// claude`.
func ParseFormat(name string, allowed ...Format) (Format, error) {
	if len(allowed) == 0 {
		allowed = formats
	}
	f := Format(name)
	if name == humanName {
		f = FormatText
	}
	for _, a := range allowed {
		if f == a {
			return f, nil
		}
	}
	return "", fmt.Errorf("%q: want %s", name, listed(allowed))
}

// listed is "a, b or c".
func listed(fs []Format) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	if n := len(names); n > 1 {
		return strings.Join(names[:n-1], ", ") + " or " + names[n-1]
	}
	return strings.Join(names, "")
}

// FormatOptions are what the formats need besides their writer.
type FormatOptions struct {
	// Envelope gives every stream-json line its session and job ids.
	Envelope protocol.Envelope
	// Version is agentrun's, for Claude's init line.
	Version string
	// Text configures the text format.
	Text TextOptions
}

// ForFormat returns the sink that writes messages to w in format f; a Format that is
// none of the constants is an error.
func ForFormat(f Format, w io.Writer, o FormatOptions) (Sink, error) {
	switch f {
	case FormatText:
		return NewText(w, o.Text), nil
	case FormatStreamJSON:
		return NewStreamJSON(w, o.Envelope), nil
	case FormatClaude:
		return NewClaude(w, o.Version), nil
	case FormatRESP:
		return NewRESP(w), nil
	}
	return nil, fmt.Errorf("output format %q: want %s", f, listed(formats))
}
