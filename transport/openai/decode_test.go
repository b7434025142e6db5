package openai_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/testexit"
	"github.com/agentrun/agentrun/transport/openai"
	"github.com/agentrun/agentrun/transport/transporttest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit)) }

// TestDecode checks the decoder against every testdata/TestDecode/<case>.sse and its
// <case>.golden.jsonl.
func TestDecode(t *testing.T) {
	transporttest.DecodeGolden(t, filepath.Join("testdata", "TestDecode"), openai.New(openai.Config{}).NewDecoder, *update)
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
			give:    `{"error":"model is loading"}`,
			wantMsg: "model is loading",
		},
		"vllm flat": {
			give:    `{"object":"error","message":"bad","type":"BadRequestError","param":null,"code":400}`,
			wantMsg: "bad", wantTyp: "BadRequestError",
		},
		"openrouter": {
			give:    `{"error":{"code":402,"message":"Insufficient credits","metadata":{"x":1}}}`,
			wantMsg: "Insufficient credits",
		},
		"ollama": {
			give:    `{"error":{"message":"model \"qwen9\" not found","type":"not_found_error","param":null,"code":null}}`,
			wantMsg: `model "qwen9" not found`, wantTyp: "not_found_error",
		},
		"fastapi detail": {
			give:    `{"detail":"Not Found"}`,
			wantMsg: "Not Found",
		},
		"html":        {give: `<html>bad gateway</html>`},
		"empty":       {give: ``},
		"null error":  {give: `{"error":null}`},
		"other json":  {give: `{"choices":[]}`},
		"json string": {give: `"error"`},
	}
	d := openai.New(openai.Config{})
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			msg, typ := d.ErrorMessage([]byte(tt.give))
			assert.Equal(t, tt.wantMsg, msg)
			assert.Equal(t, tt.wantTyp, typ)
		})
	}
}
