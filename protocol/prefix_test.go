package protocol_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/protocol"
)

func TestPrefixDigest(t *testing.T) {
	tool := func(name, desc, schema string) protocol.ToolSpec {
		return protocol.ToolSpec{Name: name, Description: desc, InputSchema: json.RawMessage(schema)}
	}
	base := protocol.Request{Model: "m", System: "be brief", Tools: []protocol.ToolSpec{tool("Read", "reads", `{}`)},
		Messages: []protocol.Turn{protocol.UserText("one")}}
	d := base.PrefixDigest()
	assert.Len(t, d, 64)

	same := base
	same.Model, same.Messages, same.MaxTokens = "other", []protocol.Turn{protocol.UserText("two")}, 5
	same.SystemTail = "workspace: /out/sessions/task-2/workspace"
	assert.Equal(t, d, same.PrefixDigest(), "the model, the conversation and the system prompt's tail are not part of the prefix")

	tests := map[string]protocol.Request{
		"another system":        {System: "be long", Tools: base.Tools},
		"another tool":          {System: base.System, Tools: []protocol.ToolSpec{tool("Write", "reads", `{}`)}},
		"another schema":        {System: base.System, Tools: []protocol.ToolSpec{tool("Read", "reads", `{"type":"object"}`)}},
		"no tools":              {System: base.System},
		"a boundary moved":      {System: base.System, Tools: []protocol.ToolSpec{tool("Rea", "dreads", `{}`)}},
		"system text into tool": {System: "be", Tools: []protocol.ToolSpec{tool(" brief", "", ""), tool("Read", "reads", `{}`)}},
	}
	for name, r := range tests {
		t.Run(name, func(t *testing.T) { assert.NotEqual(t, d, r.PrefixDigest()) })
	}
	assert.Empty(t, protocol.Request{Messages: base.Messages}.PrefixDigest(), "no system and no tools: no prefix")
}

func TestSystemPrompt(t *testing.T) {
	tests := map[string]struct {
		req  protocol.Request
		want string
	}{
		"both":      {protocol.Request{System: "cached", SystemTail: "tail"}, "cached\ntail"},
		"no tail":   {protocol.Request{System: "cached"}, "cached"},
		"tail only": {protocol.Request{SystemTail: "tail"}, "tail"},
		"neither":   {protocol.Request{}, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) { assert.Equal(t, tc.want, tc.req.SystemPrompt()) })
	}
}

func TestNoticeStart(t *testing.T) {
	protocol.NoticeStart(context.Background()) // no function: nothing happens
	n := 0
	ctx := protocol.WithStartNotice(context.Background(), func() { n++ })
	protocol.NoticeStart(ctx)
	assert.Equal(t, 1, n)
}
