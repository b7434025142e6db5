package sink_test

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/testexit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit)) }

// Every sink satisfies the interface.
var (
	_ sink.Sink = (*sink.StreamJSON)(nil)
	_ sink.Sink = (*sink.Events)(nil)
	_ sink.Sink = (*sink.Text)(nil)
	_ sink.Sink = (*sink.RESP)(nil)
	_ sink.Sink = (*sink.Fanout)(nil)
	_ sink.Sink = (*sink.Redactor)(nil)
)

// fakeSink is a Sink made of two functions; nil ones succeed.
type fakeSink struct {
	write func(protocol.Message) error
	close func() error
}

func (f fakeSink) Write(m protocol.Message) error {
	if f.write == nil {
		return nil
	}
	return f.write(m)
}

func (f fakeSink) Close() error {
	if f.close == nil {
		return nil
	}
	return f.close()
}

// recorder returns a sink that appends what it receives to *msgs.
func recorder(msgs *[]protocol.Message) fakeSink {
	return fakeSink{write: func(m protocol.Message) error {
		*msgs = append(*msgs, m)
		return nil
	}}
}

// flushWriter records every Write call and every Flush.
type flushWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	writes  []string
	flushes int
	err     error // returned by Write when set
}

func (w *flushWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	w.writes = append(w.writes, string(p))
	return w.buf.Write(p)
}

func (w *flushWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushes++
	return nil
}

// syncWriter has a Sync method, like a buffered log writer.
type syncWriter struct {
	bytes.Buffer
	syncs int
}

func (w *syncWriter) Sync() error {
	w.syncs++
	return nil
}

var errDisk = errors.New("disk full")

func TestSyncWriter(t *testing.T) {
	var fw flushWriter
	w := sink.NewSyncWriter(&fw)
	n, err := w.Write([]byte("line\n"))
	assert.NoError(t, err)
	assert.Equal(t, 5, n)
	assert.NoError(t, w.Flush())
	assert.Equal(t, []string{"line\n"}, fw.writes)
	assert.Equal(t, 1, fw.flushes)
}
