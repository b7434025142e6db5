package responses_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/testexit"
	"github.com/agentrun/agentrun/transport/responses"
	"github.com/agentrun/agentrun/transport/transporttest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit)) }

// TestDecode checks the decoder against every testdata/TestDecode/<case>.sse and its
// <case>.golden.jsonl.
func TestDecode(t *testing.T) {
	transporttest.DecodeGolden(t, filepath.Join("testdata", "TestDecode"), responses.New(responses.Config{}).NewDecoder, *update)
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
