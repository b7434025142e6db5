package scripted_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrun/agentrun/fuzzguard"

	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/scripted"
)

// FuzzHandler sends arbitrary bodies, as the session or as any sub-agent (the parent
// header), to every route: the handler never panics and answers either a complete
// stream or a JSON error.
func FuzzHandler(f *testing.F) {
	files, err := filepath.Glob("testdata/TestHandlerGolden/*.request.json")
	require.NoError(f, err)
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(f, err)
		for route := range uint8(3) {
			for _, parent := range []string{"", "tc_0_0", "tc_0_0.1_0", "tc_0_1.0_0.x"} {
				f.Add(route, parent, b)
			}
		}
	}
	s, err := scripted.LoadScript("testdata/scripts/hello.yaml")
	require.NoError(f, err)
	sub, err := scripted.LoadScript("testdata/scripts/subagents.yaml")
	require.NoError(f, err)
	models := []*scripted.Model{scripted.New(scripted.Options{}), scripted.New(scripted.Options{Default: s}),
		scripted.New(scripted.Options{Default: sub}),
		// the prompt cache on every prefix, and a rate limit never reached: their headers
		scripted.New(scripted.Options{Default: s, PromptCache: scripted.PromptCache{TTL: time.Minute, MinTokens: 1},
			RateLimit: scripted.RateLimit{RequestsPerMinute: 1 << 30, TokensPerMinute: 1 << 40}})}
	f.Fuzz(func(t *testing.T, route uint8, parent string, body []byte) {
		fuzzguard.Run(len(body)+len(parent), func() {
			w := wires[int(route)%len(wires)]
			for _, m := range models {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("POST", w.path, bytes.NewReader(body))
				req.Header.Set(protocol.ParentHeader, parent)
				m.Handler().ServeHTTP(rec, req)
				switch rec.Code {
				case http.StatusOK:
					evs, err := events(rec.Body)
					if err != nil || len(evs) == 0 || !w.terminal(evs[len(evs)-1]) {
						t.Fatalf("incomplete stream (%v): %s", err, rec.Body.String())
					}
				case http.StatusBadRequest:
					if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
						t.Fatalf("error without a JSON body: %s", rec.Body.String())
					}
				default:
					t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
				}
			}
		})
	})
}
