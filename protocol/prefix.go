package protocol

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// PrefixDigest identifies the part of r that every request of a session repeats first
// and that providers cache: its system prompt up to the breakpoint (System, not
// SystemTail) and its tools, in order. It is "" when r has neither. Sessions whose
// first requests share a digest (and a model and an endpoint) can share one
// prompt-cache entry.
func (r Request) PrefixDigest() string {
	if r.System == "" && len(r.Tools) == 0 {
		return ""
	}
	h := sha256.New()
	field := func(s []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write(s)
	}
	field([]byte(r.System))
	for _, t := range r.Tools {
		field([]byte(t.Name))
		field([]byte(t.Description))
		field(t.InputSchema)
	}
	return hex.EncodeToString(h.Sum(nil))
}
