package runner_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A headless Chromium driven over the DevTools protocol on --remote-debugging-pipe:
// commands go to its fd 3 and answers and events come from its fd 4, each one JSON
// object ended by a NUL byte.

// chromiumNames are the names Chromium goes by; Debian's package installs chromium.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// findChromium returns the browser's path. Without one the test skips, unless
// AGENTRUN_REQUIRE_TOOLS is set (as .ci/run does), where it fails.
func findChromium(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: no browser; the report's HTML is checked without one too")
	}
	for _, name := range chromiumNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "chromium is not installed (apt-get install chromium): the report's browser test needs it"
	if os.Getenv("AGENTRUN_REQUIRE_TOOLS") != "" {
		tb.Fatal(msg + " and AGENTRUN_REQUIRE_TOOLS is set")
	}
	tb.Skip(msg)
	return ""
}

// cdpTimeout bounds each wait for the browser.
const cdpTimeout = 60 * time.Second

// browser is one headless Chromium with one page.
type browser struct {
	tb      testing.TB
	cmd     *exec.Cmd
	send    *os.File // the browser reads it as fd 3
	recv    *os.File // the browser writes it as fd 4
	rd      *bufio.Reader
	next    int
	session string // the page's session
	events  []cdpMessage
	stderr  string        // the file of the browser's stderr
	exited  chan struct{} // closed when the browser has exited, with whatever status
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// startBrowser starts Chromium with a page of width × height CSS pixels; it is killed,
// with every process of its group, when the test ends.
func startBrowser(tb testing.TB, width, height int) *browser {
	tb.Helper()
	bin := findChromium(tb)
	cmdR, cmdW, err := os.Pipe()
	require.NoError(tb, err)
	resR, resW, err := os.Pipe()
	require.NoError(tb, err)
	args := []string{"--headless", "--remote-debugging-pipe", "--user-data-dir=" + tb.TempDir(),
		"--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-extensions",
		"--disable-background-networking", "--disable-sync", "--disable-component-update",
		"--hide-scrollbars", "--mute-audio", "--force-device-scale-factor=1", "--force-color-profile=srgb",
		"--font-render-hinting=none", fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank"}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox") // Chromium refuses to run as root with its sandbox
	}
	b := &browser{tb: tb, send: cmdW, recv: resR, rd: bufio.NewReaderSize(resR, 1<<20), exited: make(chan struct{}),
		stderr: filepath.Join(tb.TempDir(), "chromium.log")}
	logFile, err := os.Create(b.stderr)
	require.NoError(tb, err)
	b.cmd = exec.Command(bin, args...)
	b.cmd.ExtraFiles = []*os.File{cmdR, resW}
	b.cmd.Stderr = logFile
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = b.cmd.Start()
	// The child has its copies now; ours of its ends go, and a failed close of a pipe
	// or of a file nothing was written to through this handle loses nothing.
	_ = cmdR.Close()
	_ = resW.Close()
	_ = logFile.Close()
	if err != nil {
		_ = cmdW.Close()
		_ = resR.Close()
		require.NoError(tb, err)
	}
	go func() {
		_ = b.cmd.Wait() // it is asked to quit, or killed: no status is wrong
		close(b.exited)
	}()
	tb.Cleanup(b.close)

	var target struct {
		TargetID string `json:"targetId"`
	}
	b.browserCall("Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	b.browserCall("Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	b.session = attached.SessionID
	b.call("Page.enable", nil, nil)
	b.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height,
		"deviceScaleFactor": 1, "mobile": false}, nil)
	return b
}

// close asks the browser to quit, then kills what is left of its process group.
func (b *browser) close() {
	b.next++
	_, _ = b.send.Write(append([]byte(fmt.Sprintf(`{"id":%d,"method":"Browser.close"}`, b.next)), 0))
	select {
	case <-b.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.exited
	}
	// Helpers of the browser that outlived it (a zygote, a crashed renderer).
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	_ = b.send.Close() // the browser is gone: its pipes have nothing left to lose
	_ = b.recv.Close()
}

// fail ends the test with what the browser printed.
func (b *browser) fail(format string, args ...any) {
	b.tb.Helper()
	raw, _ := os.ReadFile(b.stderr)
	log := string(raw)
	if len(log) > 4000 {
		log = log[len(log)-4000:]
	}
	b.tb.Fatalf("chromium: "+format+"\n(stderr, last part)\n%s", append(args, log)...)
}

// read returns the next message from the browser, awaited for what.
func (b *browser) read(what string) cdpMessage {
	b.tb.Helper()
	if err := b.recv.SetReadDeadline(time.Now().Add(cdpTimeout)); err != nil {
		b.fail("%v", err)
	}
	line, err := b.rd.ReadBytes(0)
	if err != nil {
		b.fail("waiting for %s: %v", what, err)
	}
	var m cdpMessage
	if err := json.Unmarshal(bytes.TrimSuffix(line, []byte{0}), &m); err != nil {
		b.fail("answer %q: %v", line, err)
	}
	return m
}

func (b *browser) browserCall(method string, params, result any) {
	b.tb.Helper()
	b.do("", method, params, result)
}

// call sends a command to the page and decodes its result into result (when not nil).
func (b *browser) call(method string, params, result any) {
	b.tb.Helper()
	b.do(b.session, method, params, result)
}

func (b *browser) do(session, method string, params, result any) {
	b.tb.Helper()
	b.next++
	id := b.next
	msg, err := json.Marshal(struct {
		ID        int    `json:"id"`
		SessionID string `json:"sessionId,omitempty"`
		Method    string `json:"method"`
		Params    any    `json:"params,omitempty"`
	}{id, session, method, params})
	require.NoError(b.tb, err)
	if _, err := b.send.Write(append(msg, 0)); err != nil {
		b.fail("send %s: %v", method, err)
	}
	for {
		m := b.read(method)
		if m.ID != id {
			if m.Method != "" {
				b.events = append(b.events, m)
			}
			continue
		}
		if m.Error != nil {
			b.fail("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if result != nil {
			require.NoError(b.tb, json.Unmarshal(m.Result, result), method)
		}
		return
	}
}

// waitEvent waits for the page's next event named method.
func (b *browser) waitEvent(method string) cdpMessage {
	b.tb.Helper()
	for {
		for i, m := range b.events {
			if m.Method == method && m.SessionID == b.session {
				b.events = append(b.events[:i], b.events[i+1:]...)
				return m
			}
		}
		m := b.read(method)
		if m.Method != "" {
			b.events = append(b.events, m)
		}
	}
}

// open loads url in the page and waits for its load event; a new fragment of the page
// shown is a navigation within it, with no load.
func (b *browser) open(url string) {
	b.tb.Helper()
	b.events = nil
	var nav struct {
		LoaderID  string `json:"loaderId"`
		ErrorText string `json:"errorText"`
	}
	b.call("Page.navigate", map[string]any{"url": url}, &nav)
	if nav.ErrorText != "" {
		b.fail("navigate to %s: %s", url, nav.ErrorText)
	}
	if nav.LoaderID != "" {
		b.waitEvent("Page.loadEventFired")
	}
}

// eval evaluates a JavaScript expression in the page, awaiting a promise, and decodes
// its value into out (when not nil). An exception fails the test.
func (b *browser) eval(expr string, out any) {
	b.tb.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	b.call("Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res)
	if e := res.ExceptionDetails; e != nil {
		desc := e.Text
		if e.Exception != nil {
			desc = e.Exception.Description
		}
		b.tb.Fatalf("javascript %s: %s", firstLine(expr), desc)
	}
	if out != nil {
		require.NoError(b.tb, json.Unmarshal(res.Result.Value, out), "value of %s", firstLine(expr))
	}
}

// screenshot captures the page's viewport as PNG.
func (b *browser) screenshot() []byte {
	b.tb.Helper()
	var shot struct {
		Data string `json:"data"`
	}
	b.call("Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	require.NoError(b.tb, err)
	return png
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
