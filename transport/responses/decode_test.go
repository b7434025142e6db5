package responses_test

import (
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/responses"
	"github.com/agentrun/agentrun/transport/transporttest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDecode serves every testdata/TestDecode/<case>.sse over loopback HTTP in 1–7
// byte writes and compares the decoded messages, plus the final error if any, with
// <case>.golden.jsonl.
func TestDecode(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "TestDecode", "*.sse"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".sse")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(file)
			require.NoError(t, err)
			srv := transporttest.NewServer(t, transporttest.Response{Body: body})

			got := decodeURL(t, srv.URL)

			golden := strings.TrimSuffix(file, ".sse") + ".golden.jsonl"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644))
			}
			assertJSONLines(t, readLines(t, golden), got)
		})
	}
}

// decodeURL fetches url and decodes the body, returning one event line per message and
// a last error line when the decoder failed.
func decodeURL(t *testing.T, url string) []string {
	t.Helper()
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	return drain(t, responses.NewDecoder(resp.Body))
}

func drain(t *testing.T, d transport.Decoder) []string {
	t.Helper()
	var lines []string
	for d.Next() {
		lines = append(lines, eventLine(t, d.Message()))
	}
	if err := d.Err(); err != nil {
		var te *transport.Error
		require.True(t, errors.As(err, &te), "error %v is not a *transport.Error", err)
		lines = append(lines, eventLine(t, protocol.Message{Kind: protocol.KindError, Err: te.Protocol()}))
	}
	return lines
}

func eventLine(t *testing.T, m protocol.Message) string {
	t.Helper()
	b, err := protocol.AppendEvent(nil, m, protocol.Envelope{})
	require.NoError(t, err)
	return string(b)
}

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

func assertJSONLines(t *testing.T, want, got []string) {
	t.Helper()
	require.Len(t, got, len(want), "got:\n%s", strings.Join(got, "\n"))
	for i := range want {
		assert.JSONEq(t, want[i], got[i], "line %d", i+1)
	}
}

// TestDecodeInvariants checks, for every fixture, what any stream must satisfy: a
// clean end has exactly one stop, last, right after one usage; an error end has none.
func TestDecodeInvariants(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "TestDecode", "*.sse"))
	require.NoError(t, err)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, err := os.Open(file)
			require.NoError(t, err)
			defer f.Close()
			d := responses.NewDecoder(f)
			var kinds []protocol.Kind
			for d.Next() {
				kinds = append(kinds, d.Message().Kind)
			}
			stops := 0
			for _, k := range kinds {
				if k == protocol.KindStop {
					stops++
				}
			}
			if d.Err() != nil {
				assert.Zero(t, stops)
				return
			}
			require.GreaterOrEqual(t, len(kinds), 2)
			assert.Equal(t, 1, stops)
			assert.Equal(t, protocol.KindStop, kinds[len(kinds)-1])
			assert.Equal(t, protocol.KindUsage, kinds[len(kinds)-2])
		})
	}
}

func TestErrorMessage(t *testing.T) {
	tests := map[string]struct {
		give    string
		wantMsg string
		wantTyp string
	}{
		"openai": {
			give:    `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			wantMsg: "Incorrect API key provided.", wantTyp: "invalid_request_error",
		},
		"code only": {
			give:    `{"error":{"message":"Rate limit reached","type":null,"code":"rate_limit_exceeded"}}`,
			wantMsg: "Rate limit reached", wantTyp: "rate_limit_exceeded",
		},
		"plain string": {
			give:    `{"error":"not implemented"}`,
			wantMsg: "not implemented",
		},
		"flat": {
			give:    `{"object":"error","message":"bad","type":"BadRequestError","param":null,"code":400}`,
			wantMsg: "bad", wantTyp: "BadRequestError",
		},
		"html":       {give: `<html>bad gateway</html>`},
		"empty":      {give: ``},
		"null error": {give: `{"error":null}`},
		"other json": {give: `{"output":[]}`},
	}
	d := responses.New(responses.Config{})
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			msg, typ := d.ErrorMessage([]byte(tt.give))
			assert.Equal(t, tt.wantMsg, msg)
			assert.Equal(t, tt.wantTyp, typ)
		})
	}
}
