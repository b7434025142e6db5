package sse_test

import (
	"bytes"
	"errors"
	"github.com/agentrun/agentrun/fuzzguard"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"github.com/agentrun/agentrun/transport/sse"
)

// FuzzDecoder checks that the decoder never panics, returns only its own errors, never
// emits more bytes than it read, and decodes the same events whatever the read sizes.
func FuzzDecoder(f *testing.F) {
	// Seeds: the decoder's own cases and the Anthropic fixtures.
	var seeds []string
	for _, pattern := range []string{
		filepath.Join("testdata", "seeds", "*"),
		filepath.Join("..", "anthropic", "testdata", "TestDecode", "*.sse"),
	} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, m...)
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fuzzguard.Run(len(in), func() {
			// A limit below the input size, so that both limit paths are reachable.
			maxLine := len(in)/2 + 1
			whole, err := drain(sse.NewDecoder(bytes.NewReader(in)), maxLine)
			if err != nil && !errors.Is(err, sse.ErrLineTooLong) && !errors.Is(err, sse.ErrEventTooLong) {
				t.Fatalf("unexpected error %v", err)
			}
			size := 0
			for _, e := range whole {
				size += len(e.Type) + len(e.Data)
			}
			if size > len(in) {
				t.Fatalf("output of %d bytes from %d bytes of input", size, len(in))
			}
			split, err2 := drain(sse.NewDecoder(iotest.OneByteReader(bytes.NewReader(in))), maxLine)
			if (err == nil) != (err2 == nil) {
				t.Fatalf("whole read error %v, one-byte reads error %v", err, err2)
			}
			if len(split) != len(whole) {
				t.Fatalf("whole read gives %d events, one-byte reads %d", len(whole), len(split))
			}
			for i := range whole {
				a, b := whole[i], split[i]
				if a.Type != b.Type || !bytes.Equal(a.Data, b.Data) || a.ID != b.ID || a.Retry != b.Retry || a.Comment != b.Comment {
					t.Fatalf("event %d: whole read %+v, one-byte reads %+v", i, a, b)
				}
			}
		})
	})
}

// drain reads every event with the given line limit.
func drain(d *sse.Decoder, maxLine int) ([]sse.Event, error) {
	d.SetMaxLine(maxLine)
	var out []sse.Event
	for d.Next() {
		out = append(out, d.Event())
	}
	return out, d.Err()
}
