package mcpclient

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// render is a tool result as the model reads it: the text of its content, a line for
// each image, audio or resource it cannot show, and the structured content as JSON
// when no text already holds it.
func render(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, strings.TrimSpace(fmt.Sprintf("[resource link: %s %s]", c.URI, c.Name)))
		case *mcp.EmbeddedResource:
			switch r := c.Resource; {
			case r == nil:
			case r.Text != "":
				parts = append(parts, r.Text)
			default:
				parts = append(parts, fmt.Sprintf("[resource: %s, %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob)))
			}
		default:
			if b, err := json.Marshal(c); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && !holdsJSON(parts, b) {
			parts = append(parts, "structured content: "+string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// holdsJSON reports whether one of parts is the JSON value b, by meaning.
func holdsJSON(parts []string, b []byte) bool {
	var want any
	if json.Unmarshal(b, &want) != nil {
		return false
	}
	wantText, _ := json.Marshal(want)
	for _, p := range parts {
		var got any
		if json.Unmarshal([]byte(p), &got) == nil {
			if gotText, _ := json.Marshal(got); bytes.Equal(gotText, wantText) {
				return true
			}
		}
	}
	return false
}

// describe is the description a tool is offered with.
func describe(t *mcp.Tool) string {
	if t.Description != "" {
		return t.Description
	}
	return t.Title
}

// inputSchema is the tool's input schema as JSON, an empty object schema when the
// server gave none that is an object.
func inputSchema(t *mcp.Tool) json.RawMessage {
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil && len(b) > 0 && b[0] == '{' {
			return b
		}
	}
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

// envList is env as NAME=value entries, in name order.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// shortHash is 8 hex digits of the SHA-256 of s.
func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}
