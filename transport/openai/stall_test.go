package openai_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/fuzzguard"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/openai"
)

// manyCallIDs is one chunk with n tool call fragments, each with an id of its own and
// no index: the input FuzzDecode stalled on. Each fragment looked for its call by
// scanning every open call, so n fragments took n² steps (40,000 took 4 s); a hostile
// endpoint could pin a CPU with a few hundred KB. testdata/fuzz/FuzzDecode/many_call_ids
// holds a small one as a seed; the large one is built here, since a 590 KB seed slows
// the fuzzer itself.
func manyCallIDs(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`data: {"choices":[{"delta":{"tool_calls":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"` + strconv.Itoa(i) + `"}`)
	}
	b.WriteString("]}}]}\n\ndata: [DONE]\n\n")
	return b.Bytes()
}

// TestDecodeManyCallIDs decodes 40,000 fragments within the fuzz deadline (the process
// dies past it): the calls have no name, so none is yielded, and the stream ends cleanly.
func TestDecodeManyCallIDs(t *testing.T) {
	body := manyCallIDs(40_000)
	var kinds []protocol.Kind
	fuzzguard.Run(len(body), func() {
		d := openai.New(openai.Config{}).NewDecoder(bytes.NewReader(body))
		for d.Next() {
			kinds = append(kinds, d.Message().Kind)
		}
		require.NoError(t, d.Err())
	})
	assert.Equal(t, []protocol.Kind{protocol.KindUsage, protocol.KindStop}, kinds)
}
