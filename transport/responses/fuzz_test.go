package responses_test

import (
	"path/filepath"
	"testing"

	"github.com/agentrun/agentrun/transport/responses"
	"github.com/agentrun/agentrun/transport/transporttest"
)

// FuzzDecode feeds arbitrary bodies to the decoder. It must never panic, must end
// either cleanly with exactly one stop (last, after one usage) or with a
// *transport.Error and no stop, and must not yield more text than it read.
func FuzzDecode(f *testing.F) {
	transporttest.AddDecodeSeeds(f, filepath.Join("testdata", "TestDecode"))
	f.Add([]byte("data: {\"type\":\"response.function_call_arguments.delta\",\"delta\":\"{}\"}\n\n" +
		"data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"name\":\"n\"}}\n\n" +
		"data: {\"type\":\"response.completed\",\"response\":{}}\n\n"))
	f.Add([]byte("data: {\"type\":\"error\",\"error\":{\"code\":503}}\n\n"))
	transporttest.FuzzDecoder(f, responses.New(responses.Config{}).NewDecoder)
}
