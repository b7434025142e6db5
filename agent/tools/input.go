package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// decodeInput unmarshals a tool's JSON input object into v. Unknown members are
// ignored: models add them, and they do no harm.
func decodeInput(input json.RawMessage, v any) error {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	if err := json.Unmarshal(input, v); err != nil {
		return fmt.Errorf("invalid input: %w", err)
	}
	return nil
}

// number is an optional integer input. Models send 10, 10.0 or "10"; all are accepted.
type number struct {
	set bool
	n   int64
}

// UnmarshalJSON accepts a JSON number, a string holding one, or null.
func (x *number) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		return nil
	}
	if uq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(uq)
		if s == "" {
			return nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return fmt.Errorf("want an integer, got %s", b)
	}
	x.set, x.n = true, int64(f)
	return nil
}

// flag is an optional boolean input that also accepts "true" and "false" strings.
type flag bool

// UnmarshalJSON accepts true, false, their string forms, or null.
func (f *flag) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(bytes.TrimSpace(b)), `"`)
	switch strings.ToLower(s) {
	case "true", "1":
		*f = true
	case "false", "0", "", "null":
		*f = false
	default:
		return fmt.Errorf("want true or false, got %s", b)
	}
	return nil
}

// failure is an error result.
func failure(msg string) Result {
	return Result{Content: msg, IsError: true}
}

// schema builds a tool's JSON input schema from its properties and required names.
func schema(properties string, required ...string) json.RawMessage {
	req, err := json.Marshal(required)
	if err != nil || len(required) == 0 {
		req = []byte("[]")
	}
	return json.RawMessage(`{"type":"object","properties":{` + properties + `},"required":` + string(req) + `}`)
}
