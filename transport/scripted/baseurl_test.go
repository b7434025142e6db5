package scripted_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport"
	"github.com/agentrun/agentrun/transport/scripted"
)

// TestBaseURLForms points every real transport at the scripted handler with the base
// URL written with and without "/v1", as the SDKs and Ollama's docs write it, and with
// a wrong path, whose 404 must name the URL tried.
func TestBaseURLForms(t *testing.T) {
	m := scripted.New(scripted.Options{Default: mustParse(t, "steps:\n  - text: hello\n")})
	// Like Ollama, the server answers only under /v1.
	h := m.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1/") {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tests := map[string]struct {
		base    string
		wantErr string // the start of the error message; empty for success
	}{
		"host only":           {base: srv.URL},
		"host only, slash":    {base: srv.URL + "/"},
		"with v1":             {base: srv.URL + "/v1"},
		"with v1, slash":      {base: srv.URL + "/v1/"},
		"wrong path is a 404": {base: srv.URL + "/api", wantErr: "HTTP 404"},
	}
	for name, tt := range tests {
		for _, d := range dialects {
			t.Run(name+"/"+d.name, func(t *testing.T) {
				c := transport.NewClient(d.new(tt.base), transport.Options{MaxAttempts: 1})
				t.Cleanup(c.CloseIdleConnections)
				got := collect(c.Stream(t.Context(), protocol.Request{Model: "scripted", Messages: []protocol.Turn{user("go")}}))
				require.NotEmpty(t, got)
				end := last(got)
				if tt.wantErr == "" {
					require.Equal(t, protocol.KindStop, end.Kind, "%+v", end.Err)
					assert.Equal(t, "hello", got[0].Text)
					return
				}
				require.Equal(t, protocol.KindError, end.Kind)
				assert.True(t, strings.HasPrefix(end.Err.Message, tt.wantErr), end.Err.Message)
				assert.Contains(t, end.Err.Message, "POST "+srv.URL+"/api/", "the URL tried is named")
			})
		}
	}
}
