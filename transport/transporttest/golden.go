package transporttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/agentrun/agentrun/fuzzguard"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
)

// Drain reads d to the end and returns its messages, then, when the stream failed, one
// KindError message for the failure, which must be a *transport.Error. Next must stay
// false after the end.
func Drain(t testing.TB, d transport.Decoder) []protocol.Message {
	t.Helper()
	var msgs []protocol.Message
	for d.Next() {
		msgs = append(msgs, d.Message())
	}
	assert.False(t, d.Next(), "Next after the end stays false")
	if err := d.Err(); err != nil {
		var te *transport.Error
		require.True(t, errors.As(err, &te), "error %v is not a *transport.Error", err)
		msgs = append(msgs, protocol.Message{Kind: protocol.KindError, Err: te.Protocol()})
	}
	return msgs
}

// EventLine renders m as a protocol JSON event line, without an envelope.
func EventLine(t testing.TB, m protocol.Message) string {
	t.Helper()
	b, err := protocol.AppendEvent(nil, m, protocol.Envelope{})
	require.NoError(t, err)
	return string(b)
}

// EventLines renders msgs as protocol JSON event lines.
func EventLines(t testing.TB, msgs []protocol.Message) []string {
	t.Helper()
	lines := make([]string, 0, len(msgs))
	for _, m := range msgs {
		lines = append(lines, EventLine(t, m))
	}
	return lines
}

// AssertEventLines checks that got has as many lines as want, each the same JSON value
// (compared by meaning) as the line of want at its place.
func AssertEventLines(t testing.TB, want, got []string) {
	t.Helper()
	require.Len(t, got, len(want), "got:\n%s", strings.Join(got, "\n"))
	for i := range want {
		assert.JSONEq(t, want[i], got[i], "line %d", i+1)
	}
}

// DecodeGolden runs one subtest for every <case>.sse in dir. Each serves the file over
// loopback HTTP in writes of 1 to 7 bytes, decodes the body with newDecoder (Drain),
// and compares the event lines with <case>.golden.jsonl by meaning; with update set it
// first rewrites the golden file. The same bytes read in memory one byte, then half a
// buffer, at a time must decode to the same lines. Every stream must end either
// cleanly, with one usage then one stop as its last two messages and no other stop, or
// with an error and no stop at all.
func DecodeGolden(t *testing.T, dir string, newDecoder func(io.Reader) transport.Decoder, update bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.sse"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".sse")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(file)
			require.NoError(t, err)
			msgs := Drain(t, newDecoder(serve(t, body)))
			got := EventLines(t, msgs)

			golden := strings.TrimSuffix(file, ".sse") + ".golden.jsonl"
			if update {
				require.NoError(t, os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644))
			}
			AssertEventLines(t, readLines(t, golden), got)
			assertEnd(t, msgs)

			for rname, r := range map[string]io.Reader{
				"one byte": iotest.OneByteReader(bytes.NewReader(body)),
				"half":     iotest.HalfReader(bytes.NewReader(body)),
			} {
				assert.Equal(t, got, EventLines(t, Drain(t, newDecoder(r))), rname)
			}
		})
	}
}

// serve fetches body from a loopback server that writes it in 1 to 7 byte chunks and
// returns the response body, closed when the test ends.
func serve(t *testing.T, body []byte) io.Reader {
	t.Helper()
	srv := NewServer(t, Response{Body: body})
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() }) // a read-only body from loopback
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return resp.Body
}

// assertEnd checks how a decoded stream ends: cleanly with usage then the one stop, or
// with an error and no stop.
func assertEnd(t *testing.T, msgs []protocol.Message) {
	t.Helper()
	stops := 0
	for _, m := range msgs {
		if m.Kind == protocol.KindStop {
			stops++
		}
	}
	n := len(msgs)
	if n > 0 && msgs[n-1].Kind == protocol.KindError {
		assert.Zero(t, stops, "stops in a failed stream")
		return
	}
	require.GreaterOrEqual(t, n, 2)
	assert.Equal(t, 1, stops)
	assert.Equal(t, protocol.KindStop, msgs[n-1].Kind)
	assert.Equal(t, protocol.KindUsage, msgs[n-2].Kind)
}

// readLines returns the non-blank lines of a golden file.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create it")
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// AssertGoldenJSON compares got with the JSON file golden by meaning. With update set
// it first writes got there, indented, creating the folder.
func AssertGoldenJSON(t testing.TB, golden string, got []byte, update bool) {
	t.Helper()
	if update {
		var buf bytes.Buffer
		require.NoError(t, json.Indent(&buf, got, "", "  "))
		buf.WriteByte('\n')
		require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update to create it")
	assert.JSONEq(t, string(want), string(got))
}

// AddDecodeSeeds adds every <case>.sse of dir to the seed corpus of f.
func AddDecodeSeeds(f *testing.F, dir string) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sse"))
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
}

// FuzzDecoder feeds arbitrary bodies to the decoders newDecoder returns. A decoder must
// never panic, must yield only valid kinds, at most two messages more than the body has
// bytes and no more text bytes than the body has, and must end either cleanly with
// exactly one stop (last, after one usage) or with a *transport.Error and no stop.
func FuzzDecoder(f *testing.F, newDecoder func(io.Reader) transport.Decoder) {
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzguard.Run(len(body), func() {
			d := newDecoder(bytes.NewReader(body))
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
	})
}
