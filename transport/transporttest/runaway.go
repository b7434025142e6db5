package transporttest

import (
	"fmt"
	"net/http"
	"strings"
)

// Runaway is a hostile Anthropic endpoint: it answers every request with one streamed
// response that grows to Size bytes in real SSE, as text deltas or as the input_json
// deltas of one Bash tool call, and ends properly if the client reads that far. Each
// delta carries Chunk bytes [32 KiB].
type Runaway struct {
	Size  int64
	Chunk int
	// Tool streams a tool input instead of text.
	Tool bool
}

// ServeHTTP writes the response, stopping early when the client goes away.
func (ra Runaway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	chunk := ra.Chunk
	if chunk <= 0 {
		chunk = 32 << 10
	}
	w.Header().Set("Content-Type", "text/event-stream")
	write := func(event, data string) bool {
		_, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
		return err == nil && r.Context().Err() == nil
	}
	write("message_start", `{"type":"message_start","message":{"id":"msg_runaway","usage":{"input_tokens":10,"output_tokens":1}}}`)
	block, delta := `{"type":"text","text":""}`, `{"type":"text_delta","text":"%s"}`
	if ra.Tool {
		block, delta = `{"type":"tool_use","id":"toolu_runaway","name":"Bash","input":{}}`,
			`{"type":"input_json_delta","partial_json":"%s"}`
	}
	write("content_block_start", `{"type":"content_block_start","index":0,"content_block":`+block+`}`)
	body := strings.Repeat("a", chunk)
	var sent int64
	if ra.Tool {
		first := `{\"command\":\"echo `
		write("content_block_delta", `{"type":"content_block_delta","index":0,"delta":`+fmt.Sprintf(delta, first)+`}`)
		sent += int64(len(first))
	}
	one := `{"type":"content_block_delta","index":0,"delta":` + fmt.Sprintf(delta, body) + `}`
	for sent < ra.Size {
		if !write("content_block_delta", one) {
			return
		}
		sent += int64(chunk)
	}
	if ra.Tool {
		write("content_block_delta", `{"type":"content_block_delta","index":0,"delta":`+fmt.Sprintf(delta, `\"}`)+`}`)
	}
	write("content_block_stop", `{"type":"content_block_stop","index":0}`)
	reason := "end_turn"
	if ra.Tool {
		reason = "tool_use"
	}
	write("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+reason+`"},"usage":{"output_tokens":1000}}`)
	write("message_stop", `{"type":"message_stop"}`)
}
