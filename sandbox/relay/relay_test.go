package relay

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestForwardDialFails(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var fwdErr error
	wg.Go(func() {
		fwdErr = Forward(ctx, l, func(context.Context) (net.Conn, error) { return nil, errors.New("no proxy") })
	})
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	_, err = c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the client's connection is closed")
	cancel()
	wg.Wait()
	assert.NoError(t, fwdErr)
}
