package worker_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/mcpclient/mcptest"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/testbuild"
	"github.com/agentrun/agentrun/testexit"
	"github.com/agentrun/agentrun/worker"
)

// serverEnv switches the test binary into one of the line servers below; markEnv tags
// the processes of one test, so that the process table can be searched for them.
const (
	serverEnv = "AGENTRUN_TEST_LINE_SERVER"
	markEnv   = mcptest.MarkEnv
)

// lineServer is a stdio server that speaks lines, not MCP: the relay carries bytes.
func lineServer(mode string) int {
	fmt.Fprintln(os.Stderr, "line server", mode, "starting")
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	switch mode {
	case "echo":
		for in.Scan() {
			fmt.Println("echo:", in.Text())
		}
		return 0
	case "big":
		for in.Scan() {
			n, _ := strconv.Atoi(in.Text())
			w := bufio.NewWriterSize(os.Stdout, 1<<16)
			_, _ = w.WriteString(strings.Repeat("x", n) + "\n")
			_ = w.Flush()
		}
		return 0
	case "crash":
		in.Scan()
		fmt.Fprintln(os.Stderr, "boom: cannot go on")
		return 3
	case "stubborn":
		// Ignores SIGTERM and the end of its input, and leaves a child in its group.
		signal.Ignore(syscall.SIGTERM)
		child := exec.Command("sleep", "1000")
		child.Env = os.Environ()
		if err := child.Start(); err != nil {
			return 1
		}
		fmt.Println("ready", child.Process.Pid)
		for in.Scan() {
		}
		select {}
	}
	return 2
}

// mark is a value unique to the calling test for markEnv.
func mark(t *testing.T) string { return fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()) }

// marked lists the live processes whose environment holds markEnv=m.
func marked(t *testing.T, m string) []int {
	t.Helper()
	pids, err := mcptest.Processes(m)
	require.NoError(t, err)
	return pids
}

// serverBinary makes this test binary visible in the sandbox: a link in the workspace.
func serverBinary(t *testing.T, ws string) string {
	t.Helper()
	dst := filepath.Join(ws, "line-server")
	if err := os.Link(os.Args[0], dst); err != nil {
		b, err := os.ReadFile(os.Args[0])
		require.NoError(t, err)
		testbuild.WriteExecutable(t, dst, b)
	}
	return "./line-server"
}

func startLine(t *testing.T, c *worker.Client, ws, mode, m string) *worker.MCPConn {
	t.Helper()
	conn, err := c.StartMCP(context.Background(), worker.MCPCommand{Command: serverBinary(t, ws),
		Env: []string{serverEnv + "=" + mode, markEnv + "=" + m, "GORACE=" + testexit.QuickExit}}, nil)
	require.NoError(t, err)
	return conn
}

var levels = []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock, sandbox.LevelOff}

func TestMCPRelayEchoes(t *testing.T) {
	t.Parallel()
	for _, level := range levels {
		t.Run(string(level), func(t *testing.T) {
			c, ws := newClient(t, level, "0467")
			m := mark(t)
			conn := startLine(t, c, ws, "echo", m)
			assert.Positive(t, conn.PID())
			r := bufio.NewReader(conn)
			for i := range 3 {
				_, err := fmt.Fprintf(conn, "line %d\n", i)
				require.NoError(t, err)
				got, err := r.ReadString('\n')
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("echo: line %d\n", i), got)
			}
			// A tool call runs beside the server.
			out, isErr := bash(t, c, "echo side by side")
			require.False(t, isErr, out)
			assert.Contains(t, out, "side by side")
			assert.Len(t, marked(t, m), 1, "the server runs")
			require.NoError(t, conn.Close())
			assert.Equal(t, "exit status 0: line server echo starting", conn.ExitReason(), "it exited when its stdin closed")
			assert.Empty(t, marked(t, m))
		})
	}
}

func TestMCPRelayCarriesLargeOutput(t *testing.T) {
	t.Parallel()
	c, ws := newClient(t, sandbox.LevelOff, "0467")
	conn := startLine(t, c, ws, "big", mark(t))
	defer func() { _ = conn.Close() }()
	_, err := io.WriteString(conn, strconv.Itoa(10<<20)+"\n")
	require.NoError(t, err)
	line, err := bufio.NewReaderSize(conn, 64<<10).ReadString('\n')
	require.NoError(t, err)
	assert.Len(t, line, 10<<20+1)
}

func TestMCPRelayReportsACrash(t *testing.T) {
	t.Parallel()
	c, ws := newClient(t, sandbox.LevelOff, "0467")
	conn := startLine(t, c, ws, "crash", mark(t))
	_, err := io.WriteString(conn, "go\n")
	require.NoError(t, err)
	_, err = io.ReadAll(conn)
	require.ErrorIs(t, err, worker.ErrMCPExited)
	assert.Contains(t, err.Error(), "exit status 3")
	assert.Contains(t, err.Error(), "boom: cannot go on", "the end of its stderr")
	<-conn.Exited()
	_, err = io.WriteString(conn, "more\n")
	assert.ErrorIs(t, err, worker.ErrMCPExited)
	assert.NoError(t, conn.Close(), "closing an exited server is done")
}

// TestMCPRelayStopsAStubbornServer checks the bounded shutdown: a server that ignores
// the end of its input and SIGTERM, and has a child in its group, is killed with the
// child within the grace periods.
func TestMCPRelayStopsAStubbornServer(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a server that ignores its end (not with -short)")
	}
	t.Parallel()
	for _, level := range levels {
		t.Run(string(level), func(t *testing.T) {
			t.Parallel() // each level waits out the server's grace periods
			c, ws := newClient(t, level, "0467")
			m := mark(t)
			conn := startLine(t, c, ws, "stubborn", m)
			line, err := bufio.NewReader(conn).ReadString('\n')
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(line, "ready"), line)
			assert.Len(t, marked(t, m), 2, "the server and its child")
			start := time.Now()
			require.NoError(t, conn.Close())
			assert.Less(t, time.Since(start), worker.MCPStopTimeout)
			assert.Contains(t, conn.ExitReason(), "killed by SIGKILL")
			assert.Empty(t, marked(t, m), "no process of the server is left")
		})
	}
}

// TestMCPServersEndWithTheWorker checks that closing the client ends a server that
// was never closed.
func TestMCPServersEndWithTheWorker(t *testing.T) {
	t.Parallel()
	c, ws := newClient(t, sandbox.LevelLandlock, "0467")
	m := mark(t)
	conn := startLine(t, c, ws, "stubborn", m)
	_, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	require.NoError(t, c.Close())
	<-conn.Exited()
	assert.Contains(t, conn.ExitReason(), "killed by SIGKILL", "the worker killed it as its runner left")
	assert.Empty(t, marked(t, m))
}

func TestMCPStartFails(t *testing.T) {
	t.Parallel()
	c, ws := newClient(t, sandbox.LevelOff, "0467")
	_, err := c.StartMCP(context.Background(), worker.MCPCommand{Command: "no-such-server-anywhere"}, nil)
	assert.EqualError(t, err, "start no-such-server-anywhere: not found in PATH")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "not-exec"), []byte("x"), 0o644))
	_, err = c.StartMCP(context.Background(), worker.MCPCommand{Command: "./not-exec"}, nil)
	assert.EqualError(t, err, "start ./not-exec: permission denied")
}
