package anthropic_test

import (
	"bytes"
	"errors"
	"github.com/agentrun/agentrun/fuzzguard"
	"path/filepath"
	"testing"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/anthropic"
	"github.com/agentrun/agentrun/transport/transporttest"
)

// FuzzDecode feeds arbitrary bodies to the decoder: it never panics, fails only with a
// *transport.Error (the reader never fails), ends with exactly one stop message exactly
// when it reports no error, and emits output linear in its input (encoding/json turns
// each invalid UTF-8 byte into a 3-byte U+FFFD).
func FuzzDecode(f *testing.F) {
	transporttest.AddDecodeSeeds(f, filepath.Join("testdata", "TestDecode"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzguard.Run(len(in), func() {
			d := anthropic.NewDecoder(bytes.NewReader(in))
			var msgs []protocol.Message
			size := 0
			for d.Next() {
				m := d.Message()
				if !m.Kind.Valid() {
					t.Fatalf("invalid kind %d", m.Kind)
				}
				size += len(m.Text) + len(m.Signature) + len(m.Redacted) + len(m.Call.Input) + len(m.Call.ID) + len(m.Call.Name)
				msgs = append(msgs, m)
			}
			stops := 0
			for _, m := range msgs {
				if m.Kind == protocol.KindStop {
					stops++
				}
			}
			if err := d.Err(); err != nil {
				var te *transport.Error
				if !errors.As(err, &te) {
					t.Fatalf("error %v (%T) is not a *transport.Error", err, err)
				}
				if stops != 0 {
					t.Fatalf("a failed stream yielded %d stop messages", stops)
				}
			} else if stops != 1 || msgs[len(msgs)-1].Kind != protocol.KindStop {
				t.Fatalf("a clean stream yielded %d stop messages, not one at the end", stops)
			}
			if size > 3*len(in)+2*len(msgs) { // "{}" stands in for a tool input that was never sent
				t.Fatalf("%d bytes of output from %d bytes of input", size, len(in))
			}
		})
	})
}
