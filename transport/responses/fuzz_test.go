package responses_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/responses"
)

// FuzzDecode feeds arbitrary bodies to the decoder. It must never panic, must end
// either cleanly with exactly one stop (last, after one usage) or with a
// *transport.Error and no stop, and must not yield more text than it read.
func FuzzDecode(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "TestDecode", "*.sse"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("data: {\"type\":\"response.function_call_arguments.delta\",\"delta\":\"{}\"}\n\n" +
		"data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"name\":\"n\"}}\n\n" +
		"data: {\"type\":\"response.completed\",\"response\":{}}\n\n"))
	f.Add([]byte("data: {\"type\":\"error\",\"error\":{\"code\":503}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		d := responses.NewDecoder(bytes.NewReader(body))
		var kinds []protocol.Kind
		textBytes := 0
		for d.Next() {
			m := d.Message()
			if !m.Kind.Valid() {
				t.Fatalf("invalid kind %d", m.Kind)
			}
			kinds = append(kinds, m.Kind)
			textBytes += len(m.Text)
			if len(kinds) > len(body)+2 {
				t.Fatalf("%d messages from %d bytes", len(kinds), len(body))
			}
		}
		if textBytes > len(body) {
			t.Fatalf("%d text bytes from %d input bytes", textBytes, len(body))
		}
		stops := 0
		for _, k := range kinds {
			if k == protocol.KindStop {
				stops++
			}
		}
		if err := d.Err(); err != nil {
			var te *transport.Error
			if !errors.As(err, &te) {
				t.Fatalf("error %v (%T) is not a *transport.Error", err, err)
			}
			if stops != 0 {
				t.Fatalf("error %v after a stop", err)
			}
			return
		}
		n := len(kinds)
		if stops != 1 || n < 2 || kinds[n-1] != protocol.KindStop || kinds[n-2] != protocol.KindUsage {
			t.Fatalf("clean end with kinds %v", kinds)
		}
	})
}
