package protocol

// StopReason says why a model call ended (KindStop, Result.StopReason). Its words are
// the Anthropic API's, onto which every provider's decoder maps its own once; a word
// the decoder does not know is carried as the provider sent it, and the agent treats
// it as the end of the answer. The empty value means no stop reason was received.
type StopReason string

// The stop reasons.
const (
	// StopEndTurn: the model finished its answer.
	StopEndTurn StopReason = "end_turn"
	// StopToolUse: the model made tool calls and waits for their results.
	StopToolUse StopReason = "tool_use"
	// StopMaxTokens: the answer reached the output token limit and is truncated.
	StopMaxTokens StopReason = "max_tokens"
	// StopSequence: the answer reached one of the request's stop sequences.
	StopSequence StopReason = "stop_sequence"
	// StopPauseTurn: the provider paused a long turn; sending the conversation back
	// lets it go on.
	StopPauseTurn StopReason = "pause_turn"
	// StopRefusal: the model (or the provider's filter) declined to answer.
	StopRefusal StopReason = "refusal"
	// StopContextWindow: the conversation no longer fits the model's context window.
	StopContextWindow StopReason = "model_context_window_exceeded"
)

// StopReasons lists every stop reason in a stable order.
func StopReasons() []StopReason {
	return []StopReason{StopEndTurn, StopToolUse, StopMaxTokens, StopSequence, StopPauseTurn, StopRefusal,
		StopContextWindow}
}
