package worker

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPConnOfAServerThatExitedAtOnce plays the frames of a server that wrote a line
// and exited before StartMCP's caller took its connection, in the order the reader
// dispatches them: the caller still gets the connection, with the line and how the
// server ended, and the connection is then forgotten.
func TestMCPConnOfAServerThatExitedAtOnce(t *testing.T) {
	t.Parallel()
	var cs mcpConns
	assert.False(t, cs.dispatch(nil, []string{frameMCPStarted, "7", "42", ""}), "the reply of its request")
	assert.True(t, cs.dispatch(nil, []string{frameMCPOut, "7", "hello\n"}))
	assert.True(t, cs.dispatch(nil, []string{frameMCPExit, "7", "exit status 4", "no config"}))

	conn, err := cs.take("7")
	require.NoError(t, err)
	assert.Equal(t, 42, conn.PID())
	<-conn.Exited()
	b, err := io.ReadAll(conn)
	assert.Equal(t, "hello\n", string(b), "what it wrote before it exited")
	require.ErrorIs(t, err, ErrMCPExited)
	assert.Contains(t, err.Error(), "exit status 4: no config")
	assert.Nil(t, cs.get("7"), "forgotten once handed over and exited")

	_, err = cs.take("7")
	assert.ErrorContains(t, err, "lost before it was handed over", "a connection is handed over once")
}

// TestMCPConnForgottenOnExitOnceTaken checks the other order: a connection taken while
// its server runs is forgotten when the server exits.
func TestMCPConnForgottenOnExitOnceTaken(t *testing.T) {
	t.Parallel()
	var cs mcpConns
	cs.dispatch(nil, []string{frameMCPStarted, "8", "43", ""})
	conn, err := cs.take("8")
	require.NoError(t, err)
	assert.Same(t, conn, cs.get("8"), "kept while it runs, for its output")
	var woke int
	conn.setActivity(func() { woke++ })
	cs.dispatch(nil, []string{frameMCPOut, "8", "x"})
	assert.Equal(t, 1, woke, "its output is activity")
	cs.dispatch(nil, []string{frameMCPExit, "8", "exit status 0", ""})
	assert.Nil(t, cs.get("8"))
	assert.Equal(t, "exit status 0", conn.ExitReason())
}

// TestMCPConnLostWithItsWorker checks that a server whose worker ended before it was
// handed over is reported with the worker's end.
func TestMCPConnLostWithItsWorker(t *testing.T) {
	t.Parallel()
	var cs mcpConns
	cs.dispatch(nil, []string{frameMCPStarted, "9", "44", ""})
	cs.fail(errors.New("worker exited: signal: killed"))
	_, err := cs.take("9")
	assert.ErrorContains(t, err, "MCP server lost with its worker: worker exited: signal: killed")
}
