package jsonscan

import (
	"encoding/json"
	"errors"
)

// Unmarshal is json.Unmarshal for the data of a stream event, where a member of an
// unexpected type reads as absent instead of failing the event: encoding/json skips
// such a member, decodes the rest, and reports the first it skipped, which Unmarshal
// drops. A server that sends a member the decoder does not use in a shape it does not
// expect, or a new event whose members happen to share a name with known ones, does not
// cut the stream. Invalid JSON, and data that is not an object of v's type, still fail.
func Unmarshal(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
		return nil
	}
	return err
}
