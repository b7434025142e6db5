package sink_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

func TestMulti(t *testing.T) {
	var a, c []protocol.Message
	closed := 0
	countClose := func() error { closed++; return nil }
	errWrite, errClose := errors.New("write broke"), errors.New("close broke")
	failing := fakeSink{
		write: func(protocol.Message) error { return errWrite },
		close: func() error { closed++; return errClose },
	}
	first := recorder(&a)
	first.close = countClose
	last := recorder(&c)
	last.close = countClose
	f := sink.Multi(first, failing, last)

	m := protocol.Message{Kind: protocol.KindText, Text: "hi"}
	err := f.Write(m)
	require.ErrorIs(t, err, errWrite)
	assert.Contains(t, err.Error(), "sink 1")
	assert.Equal(t, []protocol.Message{m}, a, "the sink before the failure got the message")
	assert.Equal(t, []protocol.Message{m}, c, "the sink after the failure got the message")

	err = f.Close()
	require.ErrorIs(t, err, errClose)
	assert.Equal(t, 3, closed, "every sink closed")
}

func TestMultiJoinsEveryFailure(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	f := sink.Multi(
		fakeSink{write: func(protocol.Message) error { return errA }},
		fakeSink{write: func(protocol.Message) error { return errB }},
	)
	err := f.Write(protocol.Message{Kind: protocol.KindStop})
	assert.ErrorIs(t, err, errA)
	assert.ErrorIs(t, err, errB)
	assert.NoError(t, f.Close())
}

func TestMultiRealSinks(t *testing.T) {
	var js, frames bytes.Buffer
	f := sink.Multi(sink.NewStreamJSON(&js, protocol.Envelope{}), sink.NewRESP(&frames))
	writeAll(t, f, session()...)
	require.NoError(t, f.Close())
	assert.Equal(t, len(session()), bytes.Count(js.Bytes(), []byte("\n")))

	d := protocol.NewRESPDecoder(&frames)
	n := 0
	for d.Next() {
		n++
	}
	require.NoError(t, d.Err())
	assert.Equal(t, len(session()), n)
}

func TestRESP(t *testing.T) {
	var w flushWriter
	s := sink.NewRESP(&w)
	msgs := session()
	writeAll(t, s, msgs...)
	require.NoError(t, s.Close())
	assert.Len(t, w.writes, len(msgs), "one Write per frame")
	assert.Equal(t, len(msgs)+1, w.flushes)

	d := protocol.NewRESPDecoder(&w.buf)
	var got []protocol.Message
	for d.Next() {
		got = append(got, d.Message())
	}
	require.NoError(t, d.Err())
	assert.Equal(t, msgs, got)

	assert.ErrorIs(t, s.Write(msgs[0]), sink.ErrClosed)
	assert.Error(t, sink.NewRESP(&w).Write(protocol.Message{}), "invalid kind")
	assert.ErrorIs(t, sink.NewRESP(&flushWriter{err: errDisk}).Write(msgs[0]), errDisk)
}
