package protocol

import (
	"context"
	"errors"
)

// KindForStatus classifies an HTTP status: 401 and 403 are auth, 408 a timeout, 429 a
// rate limit, 529 overload, 409 and 5xx server trouble, any other 4xx a bad request.
func KindForStatus(status int) ErrorKind {
	switch {
	case status == 401 || status == 403:
		return ErrAuth
	case status == 408:
		return ErrTimeout
	case status == 429:
		return ErrRateLimit
	case status == 529:
		return ErrOverloaded
	case status == 409 || status >= 500:
		return ErrServer
	}
	return ErrRequest
}

// KindForType classifies a provider error type word found in an error body or a
// mid-stream error event (Anthropic "overloaded_error", OpenAI "server_error", …).
// It returns "" for words it does not know.
func KindForType(typ string) ErrorKind {
	switch typ {
	case "overloaded_error", "overloaded":
		return ErrOverloaded
	case "rate_limit_error", "rate_limit_exceeded", "requests", "tokens":
		return ErrRateLimit
	case "api_error", "server_error", "internal_server_error", "timeout_error", "service_unavailable":
		return ErrServer
	case "authentication_error", "permission_error", "invalid_api_key", "billing_error", "insufficient_quota":
		return ErrAuth
	case "invalid_request_error", "not_found_error", "request_too_large", "context_length_exceeded",
		"BadRequestError", "invalid_request", "unsupported_parameter", "invalid_prompt", "model_not_found", "NotFoundError":
		return ErrRequest
	}
	return ""
}

// CancelError is the error of a model call cut short because ctx ended: a timeout when
// its deadline passed, otherwise cancelled, with the context's cause as the message
// ("request cancelled" when it has none).
func CancelError(ctx context.Context) Error {
	kind := ErrCancelled
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		kind = ErrTimeout
	}
	msg := "request cancelled"
	if cause := context.Cause(ctx); cause != nil {
		msg = cause.Error()
	}
	return Error{Kind: kind, Message: msg}
}
