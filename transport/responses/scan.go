package responses

import (
	"encoding/json"

	"github.com/agentrun/agentrun/transport/jsonscan"
	"github.com/agentrun/agentrun/transport/openai/wire"
)

// parseEvent decodes one event's data into e, which must be zero, in one pass: type
// and members alike. Every event takes a hand-written path over s, which skips the
// members it does not know (sequence_number, content_index, logprobs, obfuscation, the
// output of a response, …); whatever that path does not handle (a member of an
// unexpected type, a key in another case) goes through jsonscan.Unmarshal, which then
// also decides what is invalid. Both give the same result for every input the fast
// path accepts (FuzzParseEvent checks it).
//
// What the fast path reads into the error members may alias data, and the output
// index it reads is sp's, so nothing of e may be kept past the next event.
func parseEvent(s *jsonscan.Scanner, data []byte, e *event, sp *spare) error {
	if fastEvent(s, data, e, sp) {
		return nil
	}
	*e = event{}
	return jsonscan.Unmarshal(data, e)
}

// spare is what the fast path reads an event into to spare allocations.
type spare struct {
	itemID      string // the previous event's, reused when this one has the same
	outputIndex int    // what event.OutputIndex points to
}

// fastEvent decodes data into e, reporting false for anything it does not handle,
// leaving e partly written.
func fastEvent(s *jsonscan.Scanner, data []byte, e *event, sp *spare) bool {
	s.Reset(data)
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return s.Name(&e.Type, "response.output_text.delta", "response.function_call_arguments.delta",
				"response.reasoning_summary_text.delta", "response.reasoning_text.delta", "response.output_item.added",
				"response.output_item.done", "response.content_part.added", "response.content_part.done",
				"response.output_text.done", "response.created", "response.in_progress", "response.completed")
		case "output_index":
			return jsonscan.PtrTo(s, &e.OutputIndex, &sp.outputIndex, s.Int)
		case "item_id":
			return s.Name(&e.ItemID, sp.itemID)
		case "summary_index":
			return s.Int(&e.SummaryIndex)
		case "delta":
			return s.String(&e.Delta)
		case "name":
			return s.String(&e.Name)
		case "arguments":
			return jsonscan.Ptr(s, &e.Arguments, s.String)
		case "item":
			return jsonscan.Ptr(s, &e.Item, func(it *item) bool { return scanItem(s, it) })
		case "response":
			return jsonscan.Ptr(s, &e.Response, func(r *response) bool { return scanResponse(s, r) })
		case "error":
			return jsonscan.Ptr(s, &e.Error, func(o *wire.ErrorObject) bool { return scanError(s, o) })
		case "message":
			return raw(s, &e.Message)
		case "code":
			return raw(s, &e.Code)
		}
		return s.Ignore(key)
	}) && s.End()
}

// raw reads any value into dst, aliasing the input.
func raw(s *jsonscan.Scanner, dst *json.RawMessage) bool {
	v, ok := s.Raw()
	*dst = v
	return ok
}

func scanItem(s *jsonscan.Scanner, it *item) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return s.Name(&it.Type, "function_call", "message", "reasoning")
		case "id":
			return s.String(&it.ID)
		case "call_id":
			return s.String(&it.CallID)
		case "name":
			return s.String(&it.Name)
		case "arguments":
			return jsonscan.Ptr(s, &it.Arguments, s.String)
		}
		return s.Ignore(key)
	})
}

func scanResponse(s *jsonscan.Scanner, r *response) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "usage":
			return jsonscan.Ptr(s, &r.Usage, func(u *usage) bool { return scanUsage(s, u) })
		case "error":
			return jsonscan.Ptr(s, &r.Error, func(o *wire.ErrorObject) bool { return scanError(s, o) })
		case "incomplete_details":
			return jsonscan.Ptr(s, &r.IncompleteDetails, func(d *incompleteDetails) bool {
				return s.Object(func(key []byte) bool {
					if string(key) == "reason" {
						return s.String(&d.Reason)
					}
					return s.Ignore(key)
				})
			})
		case "max_output_tokens":
			return s.Int64(&r.MaxOutputTokens)
		}
		return s.Ignore(key)
	})
}

func scanUsage(s *jsonscan.Scanner, u *usage) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "input_tokens":
			return s.Int64(&u.InputTokens)
		case "output_tokens":
			return s.Int64(&u.OutputTokens)
		case "cached_tokens":
			return s.Int64(&u.CachedTokens)
		case "input_tokens_details":
			return jsonscan.Ptr(s, &u.InputTokensDetails, func(t *tokenDetails) bool {
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

func scanError(s *jsonscan.Scanner, o *wire.ErrorObject) bool {
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "message":
			return raw(s, &o.Message)
		case "type":
			return raw(s, &o.Type)
		case "code":
			return raw(s, &o.Code)
		}
		return s.Ignore(key)
	})
}
