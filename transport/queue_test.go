package transport

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentrun/agentrun/protocol"
)

func TestQueue(t *testing.T) {
	var q queue
	assert.Equal(t, protocol.Message{}, q.Message(), "nothing current before the first Next")
	assert.False(t, q.Next())

	q.Push(protocol.Message{Kind: protocol.KindText, Text: "a"}, protocol.Message{Kind: protocol.KindText, Text: "b"})
	assert.True(t, q.Next())
	assert.Equal(t, "a", q.Message().Text)
	assert.True(t, q.Next())
	assert.Equal(t, "b", q.Message().Text)
	assert.False(t, q.Next(), "both handed out")
	assert.Equal(t, protocol.Message{}, q.Message(), "emptied for the next event")

	q.Push(protocol.Message{Kind: protocol.KindStop, Stop: "end_turn"})
	assert.True(t, q.Next())
	assert.Equal(t, protocol.KindStop, q.Message().Kind)
	assert.Len(t, q.msgs, 1, "the emptied queue is reused, not grown")
}
