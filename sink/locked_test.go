package sink_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

// counting is a sink that is not safe for concurrent use: the race detector and the
// count tell whether Locked serialised the writers.
type counting struct{ n int }

func (c *counting) Write(protocol.Message) error { c.n++; return nil }
func (c *counting) Close() error                 { return nil }

func TestLockedSerialisesWriters(t *testing.T) {
	c := &counting{}
	l := sink.NewLocked(c)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				assert.NoError(t, l.Write(protocol.Message{Kind: protocol.KindText, Text: "x"}))
			}
		})
	}
	wg.Wait()
	require.NoError(t, l.Close())
	assert.Equal(t, 8000, c.n)
}
