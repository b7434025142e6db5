package openai_test

import (
	"path/filepath"
	"testing"

	"github.com/agentrun/agentrun/transport/openai"
	"github.com/agentrun/agentrun/transport/transporttest"
)

// FuzzDecode feeds arbitrary bodies to the decoder. It must never panic, must end
// either cleanly with exactly one stop (last, after one usage) or with a
// *transport.Error and no stop, and must not yield more text than it read.
func FuzzDecode(f *testing.F) {
	transporttest.AddDecodeSeeds(f, filepath.Join("testdata", "TestDecode"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":{\"a\":1}}}]}}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":2,\"id\":\"x\"},{\"index\":2,\"id\":\"y\",\"function\":{\"name\":\"n\"}}]},\"finish_reason\":\"stop\"}]}\n\n"))
	transporttest.FuzzDecoder(f, openai.New(openai.Config{}).NewDecoder)
}
