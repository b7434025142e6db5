// Command bench reproduces the performance table of the README: it runs the project's
// benchmarks with `go test -bench` and prints each figure beside its target.
//
//	go run ./bench            # artifacts in the default temporary folder
//	go run ./bench -tmpfs     # artifacts in /dev/shm, to measure agentrun rather than the disk
//	go run ./bench -level off # the sandbox rows at another level [strict]
//	go run ./bench -static    # CGO_ENABLED=0, as the release binary is built (Dockerfile)
//	go run ./bench -only '^./transport/'  # only the rows of the packages matched
//	go run ./bench -sessions 10000  # the many-sessions rows at issue 17's size [1000]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// figure is one row of the table: a metric read from one benchmark's output.
type figure struct {
	what  string
	pkg   string
	bench string
	args  []string
	unit  string // the unit column to read, or a derived one below
	// convert turns the read value into the shown one.
	convert func(float64) float64
	show    string // format of the shown value
	target  string
	// ok judges the shown value; nil means "reported only".
	ok func(float64) bool
}

// row is a figure read from the first result line whose name contains line, where one
// run prints several (sub-benchmarks); binArgs go to the test binary, after the package.
type row struct {
	figure
	line    string
	binArgs []string
}

// runnerGOGC is the garbage collector setting of the agentrun binary (cmd/agentrun's
// gcPercent), which the run benchmark uses too: it measures what the binary does.
const runnerGOGC = 400

func figures() []figure {
	perSecond := func(ns float64) float64 { return 1e9 / ns }
	same := func(v float64) float64 { return v }
	return []figure{
		{"RESP encode+decode, 4 KiB text messages", "./protocol", "^BenchmarkRESP$", []string{"-cpu", "1"}, "MB/s", same, "%.0f MB/s", "≥ 1,000 MB/s", func(v float64) bool { return v >= 1000 }},
		{"stream-json encoding of small text deltas", "./protocol", "^BenchmarkAppendEvent$/^text_delta$", []string{"-cpu", "1"}, "ns/op", perSecond, "%s events/s", "≥ 3,000,000 events/s", func(v float64) bool { return v >= 3e6 }},
		{"events.jsonl: one flushed line (seq, ts, write)", "./sink", "^BenchmarkEventsWrite$", []string{"-cpu", "1"}, "ns/op", func(v float64) float64 { return v / 1000 }, "%.1f µs/line", "reported", nil},
		// The decoder rows divide the bytes by the CPU time the process used, not by the
		// wall clock, so that they hold on a shared machine; on an idle one both agree.
		{"SSE decode + Anthropic normalization (per CPU second)", "./transport/anthropic", "^BenchmarkDecode$", []string{"-cpu", "1"}, "MB/cpu-s", same, "%.0f MB/s", "≥ 150 MB/s", func(v float64) bool { return v >= 150 }},
		{"… allocations per SSE event", "./transport/anthropic", "^BenchmarkDecode$", []string{"-cpu", "1"}, "allocs/event", same, "%.2f", "≤ 2", func(v float64) bool { return v <= 2 }},
		{"SSE decode + OpenAI Chat normalization, same text deltas (per CPU second)", "./transport/openai", "^BenchmarkDecode$", []string{"-cpu", "1"}, "MB/cpu-s", same, "%.0f MB/s", "≥ 150 MB/s", func(v float64) bool { return v >= 150 }},
		{"… allocations per SSE event", "./transport/openai", "^BenchmarkDecode$", []string{"-cpu", "1"}, "allocs/event", same, "%.2f", "≤ 2", func(v float64) bool { return v <= 2 }},
		{"SSE decode + OpenAI Responses normalization, same text deltas (per CPU second)", "./transport/responses", "^BenchmarkDecode$", []string{"-cpu", "1"}, "MB/cpu-s", same, "%.0f MB/s", "≥ 150 MB/s", func(v float64) bool { return v >= 150 }},
		{"… allocations per SSE event", "./transport/responses", "^BenchmarkDecode$", []string{"-cpu", "1"}, "allocs/event", same, "%.2f", "≤ 2", func(v float64) bool { return v <= 2 }},
		{"adaptive concurrency: 200 sessions queued on a 60 requests/min endpoint (rate-limit headers, 429s past it): 429s after the first 10 s, share of all requests", "./bench", "^BenchmarkRateLimited$", []string{"-benchtime", "1x", "-timeout", "30m"}, "%-429-after-10s", same, "%.1f %%", "≤ 1 %", func(v float64) bool { return v <= 1 }},
		{"… throughput from 10 s to the last answer, share of the limit", "./bench", "^BenchmarkRateLimited$", []string{"-benchtime", "1x", "-timeout", "30m"}, "%-of-limit", same, "%.1f %%", "≥ 90 %", func(v float64) bool { return v >= 90 }},
		{"… time paced, by the headers or the in-flight limit (the ideal run takes 140 s)", "./bench", "^BenchmarkRateLimited$", []string{"-benchtime", "1x", "-timeout", "30m"}, "paced-s", same, "%.0f s", "reported", nil},
		{"… time throttled, paused by 429s", "./bench", "^BenchmarkRateLimited$", []string{"-benchtime", "1x", "-timeout", "30m"}, "throttled-s", same, "%.1f s", "reported", nil},
		{"stream latency: a delta's bytes out of the connection → its line in stream.jsonl, 100 sessions streaming at once (p99)", "./bench", "^BenchmarkStreamLatency$", []string{"-benchtime", "3x"}, "p99-µs", same, "%.0f µs", "< 1 ms", func(v float64) bool { return v < 1000 }},
		{"… p50", "./bench", "^BenchmarkStreamLatency$", []string{"-benchtime", "3x"}, "p50-µs", same, "%.0f µs", "reported", nil},
		{"… the largest of 60,000", "./bench", "^BenchmarkStreamLatency$", []string{"-benchtime", "3x"}, "max-µs", func(v float64) float64 { return v / 1000 }, "%.1f ms", "reported", nil},
		{"prompt-cache priming: 100 sessions of one call at concurrency 100, a 4,000-token shared prefix, Anthropic's cache modelled: sessions that wrote the prefix, primed", "./runner", "^BenchmarkPrime$", []string{"-benchtime", "1x", "-timeout", "30m"}, "prefix-writes-primed", same, "%.0f", "1", func(v float64) bool { return v == 1 }},
		{"… the same, unprimed (cache: {prime: false})", "./runner", "^BenchmarkPrime$", []string{"-benchtime", "1x", "-timeout", "30m"}, "prefix-writes-unprimed", same, "%.0f", "reported", nil},
		{"… first-turn input cost saved by priming", "./runner", "^BenchmarkPrime$", []string{"-benchtime", "1x", "-timeout", "30m"}, "%-input-cost-saved", same, "%.1f %%", "≥ 80 %", func(v float64) bool { return v >= 80 }},
		{"… wall time priming added, in times to first token (median of 5 pairs)", "./runner", "^BenchmarkPrime$", []string{"-benchtime", "1x", "-timeout", "30m"}, "added-wall/ttft", same, "%.2f", "≤ 1.00", func(v float64) bool { return v <= 1 }},
		{"runaway endpoint: peak RSS above baseline, one 200 MB answer (default limits)", "./bench", "^BenchmarkRunaway$/^text_200MB$", []string{"-cpu", "1", "-benchtime", "3x"}, "MB-above-baseline", same, "%.1f MB", "< 64 MB", func(v float64) bool { return v < 64 }},
		{"pipeline: SSE bytes → messages → stream.jsonl, events.jsonl, transcript", "./bench", "^BenchmarkPipeline$", []string{"-cpu", "1"}, "messages/s", same, "%s messages/s", "reported", nil},
		{"agent loop: one turn of a 20-turn session, tools and artifacts included", "./agent", "^BenchmarkSession20Turns$", []string{"-cpu", "1", "-benchtime", "100x"}, "cpu-µs/turn", same, "%.0f µs CPU/turn", "< 200 µs", func(v float64) bool { return v < 200 }},
		{"… the disk's floor: the same folders and files made beside the sessions' by a bare loop, each file in one write (CPU per turn of the session)", "./agent", "^BenchmarkSession20Turns$", []string{"-cpu", "1", "-benchtime", "100x"}, "disk-floor-cpu-µs/turn", same, "%.0f µs CPU/turn", "reported", nil},
		{"… the loop above that floor", "./agent", "^BenchmarkSession20Turns$", []string{"-cpu", "1", "-benchtime", "100x"}, "above-floor-cpu-µs/turn", same, "%.0f µs CPU/turn", "reported", nil},
		{"report.html of 1,000 sessions: first contentful paint in headless Chromium (median of 5 loads)", "./runner", "^BenchmarkReport1000$", []string{"-benchtime", "1x"}, "first-paint-ms", same, "%.0f ms", "< 1,000 ms", func(v float64) bool { return v < 1000 }},
		{"… its size", "./runner", "^BenchmarkReport1000$", []string{"-benchtime", "1x"}, "report-MB", same, "%.1f MB", "reported", nil},
		{"… opening a session (unpacking and drawing its details)", "./runner", "^BenchmarkReport1000$", []string{"-benchtime", "1x"}, "open-session-ms", same, "%.0f ms", "reported", nil},
		{"… writing it from summary.json and the session folders", "./runner", "^BenchmarkReport1000$", []string{"-benchtime", "1x"}, "ns/op", func(v float64) float64 { return v / 1e9 }, "%.2f s", "reported", nil},
		{"… CPU time of writing it", "./runner", "^BenchmarkReport1000$", []string{"-benchtime", "1x"}, "cpu-s/op", same, "%.2f s", "reported", nil},
	}
}

// sandboxFigures are the rows of the tool boundary at level: a session's worker, this
// repository's test binary re-executed, confined at that level.
func sandboxFigures(level string) []row {
	same := func(v float64) float64 { return v }
	rt := "^BenchmarkToolRoundTrip$/^" + level + "$"
	start := "^BenchmarkSandboxStart$/^" + level + "$"
	run := "^BenchmarkRun1000$/^" + level + "$"
	floor := func(stages int) string {
		return "^BenchmarkRun1000Floor$/^" + level + "$/^stages=" + strconv.Itoa(stages) + "$"
	}
	runArgs := []string{"-benchtime", "1x", "-timeout", "30m"}
	mcp := func(sub string) string { return "^BenchmarkMCPCall$/^" + sub + "$" }
	mcpArgs := []string{"-benchtime", "2000x"}
	return []row{
		{figure{"tool round trip through the worker, sandbox " + level + ": a Read of a small file (p50)", "./worker", rt, nil, "p50-µs", same, "%.0f µs", "≤ 1 ms", func(v float64) bool { return v <= 1000 }}, "/read", nil},
		{figure{"… p99", "./worker", rt, nil, "p99-µs", same, "%.0f µs", "reported", nil}, "/read", nil},
		{figure{"… a Bash `true` (bash's own start included, p50)", "./worker", rt, nil, "p50-µs", func(v float64) float64 { return v / 1000 }, "%.2f ms", "reported", nil}, "/bash_true", nil},
		{figure{"… a tool's connection to the network proxy, opened and closed (bash's /dev/tcp; at landlock agentrun makes each connect)", "./worker", "^BenchmarkProxyConnect$/^" + level + "$", []string{"-benchtime", "20x"}, "µs/connect", same, "%.0f µs", "reported", nil}, "", nil},
		{figure{"sandbox start, " + level + ": new client, first Read, Close (p50)", "./worker", start, []string{"-benchtime", "200x"}, "p50-ms", same, "%.1f ms", "≤ 15 ms", func(v float64) bool { return v <= 15 }}, "", nil},
		{figure{"… up to the first tool result (p50)", "./worker", start, []string{"-benchtime", "200x"}, "p50-ms-to-first-result", same, "%.1f ms", "reported", nil}, "", nil},
		{figure{"1,000 sessions × 4 turns, 50 ms latency, concurrency 100, every tool call through a worker at " + level + ": wall / ideal", "./runner", run, runArgs, "wall/ideal", same, "%.2f", "≤ 1.10", func(v float64) bool { return v <= 1.10 }}, "", nil},
		{figure{"… peak heap per running session", "./runner", run, runArgs, "MB/running-session", same, "%.2f MB", "< 2 MB", func(v float64) bool { return v < 2 }}, "", nil},
		{figure{"… CPU per session, runner", "./runner", run, runArgs, "cpu-ms/session", same, "%.2f ms", "reported", nil}, "", nil},
		{figure{"… CPU per session, its worker", "./runner", run, runArgs, "worker-cpu-ms/session", same, "%.1f ms", "reported", nil}, "", nil},
		{figure{"… its CPU floor: the run's CPU (runner and workers) spread over every core, over the ideal", "./runner", run, runArgs, "cpu-floor-wall/ideal", same, "%.2f", "reported", nil}, "", nil},
		{figure{"… the process floor, without agentrun: per session a minimal static Go program started in the namespaces of the worker at " + level + ", which execs itself once more (as a worker's stage 1 becomes its stage 2) to wait out the 200 ms of model time, 100 at a time: wall / ideal", "./runner", floor(2), nil, "wall/ideal", same, "%.2f", "reported", nil}, "", nil},
		{figure{"… its CPU per session", "./runner", floor(2), nil, "cpu-ms/session", same, "%.2f ms", "reported", nil}, "", nil},
		{figure{"… the same floor for a worker of one Go start", "./runner", floor(1), nil, "wall/ideal", same, "%.2f", "reported", nil}, "", nil},
		{figure{"MCP tool call (echo), p50: the SDK's client and server in one process", "./mcpclient", mcp("in-process"), mcpArgs, "p50-µs", same, "%.0f µs", "reported", nil}, "/in-process", nil},
		{figure{"… a stdio server in the session's worker at " + level + " (the relay and a process of its own)", "./mcpclient", mcp("stdio$/^" + level), mcpArgs, "p50-µs", same, "%.0f µs", "≤ 1 ms", func(v float64) bool { return v <= 1000 }}, "/stdio/" + level, nil},
		{figure{"… a streamable-HTTP server on loopback", "./mcpclient", mcp("http"), mcpArgs, "p50-µs", same, "%.0f µs", "reported", nil}, "/http", nil},
	}
}

// manyFigures are the rows of sessions sessions run all at once (issue 17's 10,000,
// scaled by -sessions): each a Bash call of 3 s in its own worker at strict between two
// model calls of 1 s.
func manyFigures(sessions int) []row {
	same := func(v float64) float64 { return v }
	bench, floor := "^BenchmarkManySessions$", "^BenchmarkManySessionsFloor$"
	args := []string{"-benchtime", "1x", "-timeout", "60m"}
	bin := []string{"-sessions", strconv.Itoa(sessions)}
	n := thousands(float64(sessions))
	return []row{
		{figure{n + " sessions at once, 1 s model latency, one Bash call of 3 s each in its own worker at strict: wall / ideal (5 s)", "./runner", bench, args, "wall/ideal", same, "%.2f", "≤ 1.10", func(v float64) bool { return v <= 1.10 }}, "", bin},
		{figure{"… memory per session with a worker, every process the run started (PSS, at the peak; 3 GB for 10,000)", "./runner", bench, args, "children-PSS-KB/session", same, "%s KB", "≤ 300 KB", func(v float64) bool { return v <= 300 }}, "", bin},
		{figure{"… the same, 10,000 sessions at once", "./runner", bench, args, "children-PSS-KB/session", func(v float64) float64 { return v * 10000 / (1 << 20) }, "%.0f GB", "≤ 3 GB", func(v float64) bool { return v <= 3 }}, "", bin},
		{figure{"… the whole run's PSS: its workers and their tools, and the runner (with the model it serves)", "./runner", bench, args, "total-PSS-MB", same, "%s MB", "reported", nil}, "", bin},
		{figure{"… the same as RSS, shared pages counted in every process", "./runner", bench, args, "total-RSS-MB", same, "%s MB", "reported", nil}, "", bin},
		{figure{"… the runner's open files per running session", "./runner", bench, args, "runner-fds/session", same, "%.1f", "reported", nil}, "", bin},
		{figure{"… CPU per session of its worker, bash and sleep", "./runner", bench, args, "worker-cpu-ms/session", same, "%.1f ms", "reported", nil}, "", bin},
		{figure{"… the floor, without agentrun: the same Bash calls (`bash -c 'sleep 3'`) started at once by a bare launcher (no sandbox, model or files), the best wall / ideal (5 s) a runner could reach here", "./runner", floor, args, "full-wall/ideal", same, "%.2f", "reported", nil}, "", bin},
		{figure{"… CPU per bare Bash call, the kernel's and bash's", "./runner", floor, args, "cpu-ms/call", same, "%.1f ms", "reported", nil}, "", bin},
		{figure{"… the memory floor of a worker written in Go, without agentrun: per session a minimal static Go program started in a strict worker's namespaces, waiting out the tool (PSS at the peak; sleep adds its own)", "./runner", floor, args, "go-floor-PSS-KB/process", same, "%.0f KB", "reported", nil}, "", bin},
	}
}

func main() {
	tmpfs := flag.Bool("tmpfs", false, "write the benchmarks' files to /dev/shm (a RAM file system)")
	level := flag.String("level", "strict", "the sandbox level of the worker rows: strict, landlock or off")
	static := flag.Bool("static", false, "build the benchmarks with CGO_ENABLED=0, as the release binary is")
	only := flag.String("only", "", "measure only the rows whose package matches this regular expression (./transport/)")
	sessions := flag.Int("sessions", 1000, "sessions of the many-sessions rows, all at once (issue 17 asks for 10,000)")
	flag.Parse()
	pkgs, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: -only: %v\n", err)
		os.Exit(2)
	}
	env := os.Environ()
	if *static {
		env = append(env, "CGO_ENABLED=0")
	}
	where := os.TempDir()
	if *tmpfs {
		where = "/dev/shm"
		env = append(env, "TMPDIR=/dev/shm")
	}
	fmt.Printf("agentrun performance, %s, %s, %d CPUs (%s), %s, files in %s (%s)\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.Version(), runtime.NumCPU(), cpuModel(), runtime.GOARCH, where, fsType(where))
	cache := map[string]string{}
	fmt.Printf("| %s | %s | %s | %s |\n|---|---:|---|---|\n", "measure", "measured", "target", "")
	failed := false
	var rows []row
	for _, f := range figures() {
		rows = append(rows, row{figure: f})
	}
	rows = append(append(rows, sandboxFigures(*level)...), manyFigures(*sessions)...)
	for _, f := range rows {
		if !pkgs.MatchString(f.pkg) {
			continue
		}
		key := f.pkg + " " + f.bench + " " + strings.Join(f.args, " ") + " " + strings.Join(f.binArgs, " ")
		out, ok := cache[key]
		if !ok {
			// -v shows why a benchmark skipped (see skipped).
			args := append([]string{"test", "-v", "-run", "^$", "-bench", f.bench}, f.args...)
			args = append(append(args, f.pkg), f.binArgs...)
			cmd := exec.Command("go", args...)
			cmd.Env = env
			if f.pkg == "./runner" {
				// The run benchmark collects garbage as the agentrun binary does.
				cmd.Env = append(append([]string(nil), env...), fmt.Sprintf("GOGC=%d", runnerGOGC))
			}
			b, err := cmd.CombinedOutput()
			if err != nil {
				// The other rows still get measured; this one, and the run, fail.
				fmt.Fprintf(os.Stderr, "go %s: %v\n%s", strings.Join(args, " "), err, b)
				b = nil
			}
			out = string(b)
			cache[key] = out
		}
		v, found := metric(out, f.unit, f.line)
		if !found {
			if reason, ok := skipped(out); ok {
				fmt.Printf("| %s | skipped: %s | %s | failed |\n", f.what, reason, f.target)
				failed = true
				continue
			}
			if out != "" {
				fmt.Fprintf(os.Stderr, "%s: no %q in the output of %s:\n%s", f.what, f.unit, key, out)
			}
			fmt.Printf("| %s | %s | %s | %s |\n", f.what, "failed", f.target, "failed")
			failed = true
			continue
		}
		shown := f.convert(v)
		verdict := ""
		if f.ok != nil {
			verdict = "met"
			if !f.ok(shown) {
				verdict, failed = "missed", true
			}
		}
		value := fmt.Sprintf(f.show, shown)
		if strings.Contains(f.show, "%s") {
			value = fmt.Sprintf(f.show, thousands(shown))
		}
		fmt.Printf("| %s | %s | %s | %s |\n", f.what, value, f.target, verdict)
	}
	fmt.Printf("\nEach row: go test -run '^$' -bench <name> [flags] <package>; the ./runner rows with GOGC=%d, as the agentrun binary sets it. See bench/main.go.\n", runnerGOGC)
	if *static {
		fmt.Println("Built with CGO_ENABLED=0.")
	}
	if failed {
		os.Exit(1)
	}
}

// thousands formats v rounded to three significant digits, with separators.
func thousands(v float64) string {
	n := int64(v)
	if n >= 1000 {
		div := int64(1)
		for n/div >= 1000 {
			div *= 10
		}
		n = (n + div/2) / div * div
	}
	digits := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// metric finds the value before unit on the first benchmark result line of out whose
// name contains line.
func metric(out, unit, line string) (float64, bool) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || !strings.HasPrefix(fields[0], "Benchmark") || !strings.Contains(fields[0], line) {
			continue
		}
		for i := 3; i < len(fields); i++ {
			if fields[i] == unit {
				v, err := strconv.ParseFloat(fields[i-1], 64)
				return v, err == nil
			}
		}
	}
	return 0, false
}

// skipped reports why the benchmark in out skipped, if it did: the first line of what
// it logged under "--- SKIP:".
func skipped(out string) (string, bool) {
	_, after, ok := strings.Cut(out, "--- SKIP: ")
	if !ok {
		return "", false
	}
	lines := strings.SplitN(after, "\n", 3)
	if len(lines) < 2 || strings.TrimSpace(lines[1]) == "" {
		return "no reason given", true
	}
	reason := strings.TrimSpace(lines[1])
	if _, msg, ok := strings.Cut(reason, ": "); ok && strings.Contains(reason[:len(reason)-len(msg)], ".go:") {
		reason = msg // past "file_test.go:NN: "
	}
	return strings.ReplaceAll(reason, "|", "/"), true
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if k, v, ok := strings.Cut(string(line), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// fsType names the file system of dir (from statfs).
func fsType(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "unknown file system"
	}
	switch st.Type {
	case 0x01021994:
		return "tmpfs"
	case 0xEF53:
		return "ext4" + ext4Journal(dir)
	case 0x9123683E:
		return "btrfs"
	case 0x58465342:
		return "xfs"
	case 0x794c7630:
		return "overlayfs"
	}
	return fmt.Sprintf("file system 0x%x", st.Type)
}

// ext4Journal is ", no journal" when the ext4 file system that holds dir has none, as
// its /sys/fs/ext4/DEVICE/journal_task says: without one, each new file costs more the
// more files were deleted in the last half minute (ext4 skips their inodes), which a
// benchmark run that cleans up after itself leaves many of.
func ext4Journal(dir string) string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	var mount, source string
	for _, line := range strings.Split(string(b), "\n") {
		// id parent major:minor root mount-point options ... - type source super-options
		fields := strings.Fields(line)
		_, post, ok := strings.Cut(line, " - ")
		if !ok || len(fields) < 5 {
			continue
		}
		at, after := fields[4], strings.Fields(post)
		if len(after) < 2 || after[0] != "ext4" || !within(dir, at) || len(at) < len(mount) {
			continue
		}
		mount, source = at, after[1]
	}
	task, err := os.ReadFile("/sys/fs/ext4/" + filepath.Base(source) + "/journal_task")
	if source == "" || err != nil {
		return ""
	}
	if strings.TrimSpace(string(task)) == "<none>" {
		return ", no journal"
	}
	return ""
}

// within reports whether path is mount or inside it.
func within(path, mount string) bool {
	return mount == "/" || path == mount || strings.HasPrefix(path, mount+"/")
}
