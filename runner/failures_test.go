package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/scripted"
)

// goTestOutput is what `go test -v` prints for a testify assertion that fails among
// passing tests: before runs of noise, the assertion, after runs of noise, then go
// test's closing lines.
func goTestOutput(before, after int) string {
	var b strings.Builder
	for i := range before {
		fmt.Fprintf(&b, "=== RUN   TestEarlier%d\n--- PASS: TestEarlier%d (0.00s)\n", i, i)
	}
	b.WriteString("=== RUN   TestParse\n" +
		"    parse_test.go:42: \n" +
		"        \tError Trace:\t/src/parse/parse_test.go:42\n" +
		"        \tError:      \tNot equal: \n" +
		"        \t            \texpected: 3\n" +
		"        \t            \tactual  : 4\n" +
		"        \tTest:       \tTestParse\n" +
		"--- FAIL: TestParse (0.00s)\n")
	for i := range after {
		fmt.Fprintf(&b, "=== RUN   TestLater%d\n--- PASS: TestLater%d (0.00s)\n", i, i)
	}
	b.WriteString("FAIL\nFAIL\texample.com/m/parse\t0.012s\nFAIL\n")
	return b.String()
}

// byModel gives each session the script named by its model, played in process;
// firstByte delays a model's first byte.
type byModel struct {
	scripts   map[string]*scripted.Script
	firstByte map[string]time.Duration
}

func (p byModel) Provider(s jobs.Session, _ Liveness) (agent.Provider, ProviderInfo, error) {
	script, ok := p.scripts[s.Settings.Model]
	if !ok {
		return nil, ProviderInfo{}, fmt.Errorf("no script for model %q", s.Settings.Model)
	}
	m := scripted.New(scripted.Options{Default: script, FirstByte: p.firstByte[s.Settings.Model]})
	return m, ProviderInfo{Name: "scripted", Model: s.Settings.Model}, nil
}

func loadTestScripts(t *testing.T, names ...string) map[string]*scripted.Script {
	t.Helper()
	out := map[string]*scripted.Script{}
	for _, n := range names {
		s, err := scripted.LoadScript(filepath.Join("testdata", "scripts", n+".yaml"))
		require.NoError(t, err)
		out[n] = s
	}
	return out
}

// apiKeyInScript is the key the auth script's error body quotes back.
const apiKeyInScript = "sk-ant-TESTSECRET-0123456789"

// failuresSpec has a session of each way to fail: a check whose output explains it,
// a provider error, and the limits (turns, budget, time).
const failuresSpec = `version: 1
defaults:
  max_turns: 6
  timeout: 30s
  tools: [Read, Write, Bash]
  workspace: {dir: ws}
prices:
  budget: {input: 1000, output: 1000}
jobs:
  - id: checks
    model: success
    prompt: Write the notes, then be checked.
    checks:
      - {name: notes, run: test -f notes/success.txt}
      - {name: tests, run: "cat gotest.txt; exit 1"}
  - {id: auth, model: auth, prompt: Use a bad key.}
  - {id: max-turns, model: maxturns, max_turns: 2, prompt: Keep going.}
  - {id: budget, model: budget, budget: {max_cost_usd: 1.0}, prompt: Spend.}
  - {id: timeout, model: slow, timeout: 300ms, prompt: Answer slowly.}
  - id: slow-check
    model: success
    prompt: Write the notes, then wait for the check.
    checks: [{name: slow, run: "echo started; sleep 30", timeout: 200ms}]
  - {id: fine, model: success, prompt: Write the notes.}
`

// junitCaseDoc is a testcase of junit.xml as a report reader sees it.
type junitCaseDoc struct {
	Name    string `xml:"name,attr"`
	Failure *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Error *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"error"`
	SystemOut string `xml:"system-out"`
}

// mdFailures reads the Failures section of summary.md: per session key, the item's
// line and the text of the code block under it.
func mdFailures(t *testing.T, md string) map[string][2]string {
	t.Helper()
	_, section, ok := strings.Cut(md, "\n### Failures\n\n")
	require.True(t, ok, "summary.md has a Failures section:\n%s", md)
	out := map[string][2]string{}
	lines := strings.Split(section, "\n")
	item := regexp.MustCompile("^- `([^`]+)` (.*)$")
	for i := 0; i < len(lines); i++ {
		m := item.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		var block []string
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  ```") {
			fence := strings.TrimPrefix(lines[i+1], "  ")
			for i += 2; i < len(lines) && lines[i] != "  "+fence; i++ {
				block = append(block, strings.TrimPrefix(lines[i], "  "))
			}
		}
		out[m[1]] = [2]string{strings.NewReplacer("&lt;", "<", "&gt;", ">", `\|`, "|", `\\`, `\`, `\[`, "[", `\]`, "]").Replace(m[2]), strings.Join(block, "\n")}
	}
	return out
}

// doubled finds a word said twice at the head of a message: "error_checks:
// error_checks:", "error_checks: checks:", "panic: panic:".
var doubled = regexp.MustCompile(`\b(?:error_)?([a-z_]+): (?:error_)?([a-z_]+):`)

func assertNotDoubled(t *testing.T, where, text string) {
	t.Helper()
	for _, m := range doubled.FindAllStringSubmatch(text, -1) {
		assert.NotEqual(t, m[1], m[2], "%s says %q", where, m[0])
	}
}

// TestFailureExplained runs a session of every way to fail, with the GitHub
// integration on, and reads junit.xml, summary.md, the ::error annotations and
// summary.json: all say the same thing about each failed session, which names the
// failed check, its exit code and the assertion in its output, or the provider's
// error, or the limit that was hit.
func TestFailureExplained(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ws"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ws", "gotest.txt"), []byte(goTestOutput(20, 25)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "jobs.yaml"), []byte(failuresSpec), 0o644))
	spec, err := jobs.Load(filepath.Join(dir, "jobs.yaml"), nil)
	require.NoError(t, err)
	p := byModel{scripts: loadTestScripts(t, "success", "auth", "maxturns", "budget", "slow"),
		firstByte: map[string]time.Duration{"slow": time.Minute}}
	var log bytes.Buffer
	gh := &GitHub{Log: &log}
	out := filepath.Join(dir, "out")
	home := t.TempDir()
	_, err = New(Options{Out: out, Providers: p, GitHub: gh, Home: home, InstructionHome: home, Secrets: []string{apiKeyInScript},
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}}).Run(context.Background(), spec)
	require.NoError(t, err)

	junitXML, err := os.ReadFile(filepath.Join(out, JUnitFile))
	require.NoError(t, err)
	var doc struct {
		Cases []junitCaseDoc `xml:"testsuite>testcase"`
	}
	require.NoError(t, xml.Unmarshal(junitXML, &doc))
	md, err := os.ReadFile(filepath.Join(out, SummaryMDFile))
	require.NoError(t, err)
	inMD := mdFailures(t, string(md))
	annotations := map[string]string{}
	for _, c := range readGHLog(log.String()).find("error") {
		annotations[strings.TrimPrefix(c.Props["title"], "agentrun ")] = c.Data
	}
	var sum struct {
		Sessions []struct {
			Key     string          `json:"key"`
			CostUSD json.RawMessage `json:"cost_usd"`
			Failure *Failure        `json:"failure"`
		} `json:"sessions"`
	}
	b, err := os.ReadFile(filepath.Join(out, SummaryFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sum))
	inSummary := map[string]*Failure{}
	for _, r := range sum.Sessions {
		inSummary[r.Key] = r.Failure
		var cost any
		require.NoError(t, json.Unmarshal(r.CostUSD, &cost))
		assert.IsType(t, float64(0), cost, "%s: cost_usd %s is a number: every model of the run has a price", r.Key, r.CostUSD)
	}

	want := map[string]struct {
		summary  string
		detail   []string // lines the detail holds, in order
		noDetail []string // lines it leaves out
	}{
		"checks": {summary: "error_checks: check tests failed: exit code 1",
			detail: []string{"    parse_test.go:42: ", "        \tError:      \tNot equal: ",
				"        \t            \texpected: 3", "        \t            \tactual  : 4",
				"--- FAIL: TestParse (0.00s)", "FAIL\texample.com/m/parse\t0.012s", "FAIL"},
			noDetail: []string{"--- PASS: TestEarlier3 (0.00s)", "--- PASS: TestLater10 (0.00s)", "[exit code 1]"}},
		"slow-check": {summary: "error_checks: check slow failed: timed out after 200ms",
			detail: []string{"started", "[... command timed out after 0.2 seconds ...]"}},
		"auth":      {summary: "error_auth: HTTP 401: invalid x-api-key ***"},
		"max-turns": {summary: "error_max_turns: max turns (2) reached"},
		"budget":    {summary: "error_budget: budget exhausted: spent $2.0000 of $1.0000"},
		"timeout":   {summary: "error_timeout: session timeout reached after 300ms"},
	}
	for _, c := range doc.Cases {
		w, failed := want[c.Name]
		if !failed {
			assert.Nil(t, c.Failure, c.Name)
			assert.Nil(t, c.Error, c.Name)
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			assert.Regexp(t, `\bcost_usd=[0-9.]+\n`, c.SystemOut, "the cost is a number")
			message, body := "", ""
			switch {
			case c.Failure != nil:
				message, body = c.Failure.Message, c.Failure.Text
			case c.Error != nil:
				message, body = c.Error.Message, c.Error.Text
			default:
				t.Fatalf("no failure or error in the testcase")
			}
			assert.Equal(t, w.summary, message, "junit failure message")
			detail := ""
			if body != message {
				detail = body
			}
			if len(w.detail) == 0 {
				assert.Empty(t, detail)
			}
			lines := strings.Split(detail, "\n")
			assert.LessOrEqual(t, len(lines), explainLines)
			last := -1
			for _, l := range w.detail {
				i := indexOf(lines[last+1:], l)
				if assert.GreaterOrEqual(t, i, 0, "detail holds %q after line %d:\n%s", l, last, detail) {
					last += 1 + i
				}
			}
			for _, l := range w.noDetail {
				assert.NotContains(t, lines, l)
			}

			require.NotNil(t, inSummary[c.Name], "summary.json explains the failure")
			assert.Equal(t, Failure{Summary: message, Detail: detail}, *inSummary[c.Name], "summary.json")
			assert.Equal(t, [2]string{message, detail}, inMD[c.Name], "summary.md")
			annotation := message
			if detail != "" {
				annotation += "\n" + detail
			}
			assert.Equal(t, annotation, annotations[c.Name], "the ::error annotation")
		})
	}
	var slow protocol.Result
	resultJSON, err := os.ReadFile(filepath.Join(out, SessionsDir, "slow-check", ResultFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(resultJSON, &slow))
	require.Len(t, slow.Checks, 1)
	assert.Equal(t, 1, strings.Count(slow.Checks[0].Output, "timed out"), "the timeout is said once: %q", slow.Checks[0].Output)

	assert.Len(t, inMD, len(want))
	assert.Len(t, annotations, len(want))
	assertNotDoubled(t, "junit.xml", string(junitXML))
	assertNotDoubled(t, "summary.md", string(md))
	assertNotDoubled(t, "the job log", log.String())
	assertNotDoubled(t, "summary.json", string(b))
}

func indexOf(lines []string, s string) int {
	for i, l := range lines {
		if l == s {
			return i
		}
	}
	return -1
}
