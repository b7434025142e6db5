package openai

import (
	"github.com/agentrun/agentrun/transport/jsonscan"
)

// parseChunk decodes one chunk's data into c. The chunks of every server take a
// hand-written path over s, which skips the members it does not know (id, model,
// created, system_fingerprint, logprobs, timings, …); whatever that path does not
// handle (a member of an unexpected type, a key in another case) goes through
// jsonscan.Unmarshal into a fresh chunk, which then also decides what is invalid. Both
// give the same result for every input the fast path accepts (FuzzParseChunk checks
// it).
//
// c is reused from chunk to chunk: its slices keep their arrays, and what the fast
// path reads (a tool call's arguments, the error member) may alias data, so nothing
// of c may be kept past the next chunk.
func parseChunk(s *jsonscan.Scanner, data []byte, c *chunk) error {
	choices := c.Choices[:0]
	*c = chunk{Choices: choices}
	if fastChunk(s, data, c) {
		return nil
	}
	*c = chunk{}
	return jsonscan.Unmarshal(data, c)
}

// fastChunk decodes data into c, reporting false for anything it does not handle,
// leaving c partly written.
func fastChunk(s *jsonscan.Scanner, data []byte, c *chunk) bool {
	s.Reset(data)
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "object":
			return s.Name(&c.Object, "chat.completion.chunk")
		case "choices":
			return jsonscan.Slice(s, &c.Choices, func(ch *choice) bool { return scanChoice(s, ch) })
		case "usage":
			return jsonscan.Ptr(s, &c.Usage, func(u *usage) bool { return scanUsage(s, u) })
		case "error":
			raw, ok := s.Raw()
			c.Error = raw
			return ok
		}
		return s.Ignore(key)
	}) && s.End()
}

func scanChoice(s *jsonscan.Scanner, ch *choice) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "index":
			return s.Int(&ch.Index)
		case "delta":
			return scanDelta(s, &ch.Delta)
		case "finish_reason":
			return s.Name(&ch.FinishReason, "stop", "tool_calls", "length")
		}
		return s.Ignore(key)
	})
}

func scanDelta(s *jsonscan.Scanner, d *delta) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return s.String(&d.Content)
		case "refusal":
			return s.String(&d.Refusal)
		case "reasoning_content":
			return s.String(&d.ReasoningContent)
		case "reasoning":
			return s.String(&d.Reasoning)
		case "tool_calls":
			return jsonscan.Slice(s, &d.ToolCalls, func(tc *toolCallDelta) bool { return scanToolCall(s, tc) })
		case "function_call":
			return jsonscan.Ptr(s, &d.FunctionCall, func(f *functionDelta) bool { return scanFunction(s, f) })
		}
		return s.Ignore(key)
	})
}

func scanToolCall(s *jsonscan.Scanner, tc *toolCallDelta) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "index":
			return jsonscan.Ptr(s, &tc.Index, s.Int)
		case "id":
			return s.String(&tc.ID)
		case "function":
			return scanFunction(s, &tc.Function)
		}
		return s.Ignore(key)
	})
}

func scanFunction(s *jsonscan.Scanner, f *functionDelta) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return s.String(&f.Name)
		case "arguments":
			raw, ok := s.Raw()
			f.Arguments = raw
			return ok
		}
		return s.Ignore(key)
	})
}

func scanUsage(s *jsonscan.Scanner, u *usage) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return s.Int64(&u.PromptTokens)
		case "completion_tokens":
			return s.Int64(&u.CompletionTokens)
		case "prompt_cache_hit_tokens":
			return s.Int64(&u.PromptCacheHitTokens)
		case "prompt_tokens_details":
			return jsonscan.Ptr(s, &u.PromptTokensDetails, func(t *tokenDetails) bool {
				return s.Object(func(key []byte) bool {
					if string(key) == "cached_tokens" {
						return s.Int64(&t.CachedTokens)
					}
					return s.Ignore(key)
				})
			})
		}
		return s.Ignore(key)
	})
}
