package anthropic

import (
	"github.com/agentrun/agentrun/transport/jsonscan"
)

// parseEvent decodes one event's data into w, which must be zero. Every event but error
// takes a hand-written path over s, which skips the members it does not know; whatever
// that path does not handle (an error event, a member of an unexpected type, a key in
// another case) goes through jsonscan.Unmarshal, which then also decides what is
// invalid, and where a member of an unexpected type reads as absent. Both give the same
// result for every input the fast path accepts (FuzzParseEvent checks it).
func parseEvent(s *jsonscan.Scanner, data []byte, w *wireEvent) error {
	if fastEvent(s, data, w) {
		return nil
	}
	*w = wireEvent{}
	return jsonscan.Unmarshal(data, w)
}

// fastEvent decodes data into w (the type names that make up most of a stream without
// allocating), reporting false for anything it does not handle,
// leaving w partly written.
func fastEvent(s *jsonscan.Scanner, data []byte, w *wireEvent) bool {
	s.Reset(data)
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return s.Name(&w.Type, "content_block_delta", "content_block_stop", "content_block_start", "ping",
				"message_start", "message_delta", "message_stop")
		case "index":
			return s.Int(&w.Index)
		case "delta":
			return scanDelta(s, &w.Delta)
		case "content_block":
			return jsonscan.Ptr(s, &w.ContentBlock, func(v *wireBlock) bool { return scanBlock(s, v) })
		case "message":
			return jsonscan.Ptr(s, &w.Message, func(v *wireMessage) bool { return scanMessage(s, v) })
		case "usage":
			return jsonscan.Ptr(s, &w.Usage, func(v *wireUsage) bool { return scanUsage(s, v) })
		case "request_id":
			return s.String(&w.RequestID)
		case "error":
			return false // rare, and its members may be of any type
		}
		return s.Ignore(key)
	}) && s.End()
}

func scanDelta(s *jsonscan.Scanner, d *wireDelta) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return s.Name(&d.Type, "text_delta", "thinking_delta", "input_json_delta", "signature_delta")
		case "text":
			return s.String(&d.Text)
		case "thinking":
			return s.String(&d.Thinking)
		case "partial_json":
			return s.String(&d.PartialJSON)
		case "signature":
			return s.String(&d.Signature)
		case "stop_reason":
			return jsonscan.Ptr(s, &d.StopReason, func(r *string) bool {
				return s.Name(r, "end_turn", "tool_use", "max_tokens")
			})
		}
		return s.Ignore(key)
	})
}

func scanBlock(s *jsonscan.Scanner, b *wireBlock) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return s.Name(&b.Type, "text", "thinking", "tool_use", "redacted_thinking")
		case "text":
			return s.String(&b.Text)
		case "thinking":
			return s.String(&b.Thinking)
		case "data":
			return s.String(&b.Data)
		case "id":
			return s.String(&b.ID)
		case "name":
			return s.String(&b.Name)
		case "input":
			raw, ok := s.Raw()
			b.Input = append(b.Input[:0], raw...)
			return ok
		}
		return s.Ignore(key)
	})
}

func scanMessage(s *jsonscan.Scanner, m *wireMessage) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return s.String(&m.ID)
		case "model":
			return s.String(&m.Model)
		case "usage":
			return scanUsage(s, &m.Usage)
		}
		return s.Ignore(key)
	})
}

func scanUsage(s *jsonscan.Scanner, u *wireUsage) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "input_tokens":
			return scanCount(s, &u.InputTokens)
		case "output_tokens":
			return scanCount(s, &u.OutputTokens)
		case "cache_creation_input_tokens":
			return scanCount(s, &u.CacheCreationInputTokens)
		case "cache_read_input_tokens":
			return scanCount(s, &u.CacheReadInputTokens)
		}
		return s.Ignore(key)
	})
}

// scanCount reads a token count that may be null or absent.
func scanCount(s *jsonscan.Scanner, dst **int64) bool { return jsonscan.Ptr(s, dst, s.Int64) }
