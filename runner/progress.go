package runner

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
	"github.com/agentrun/agentrun/textcut"
)

// StatusLine is the live status line at the bottom of a terminal, such as sink.Terminal.
type StatusLine interface {
	// SetStatus replaces the status line.
	SetStatus(line string)
	// Finish leaves the last status on the screen as an ordinary line.
	Finish()
	// Width is the terminal's columns, 0 when unknown.
	Width() int
}

// progress shows the run's progress on stderr: on a terminal a live status line (counts,
// an ETA, what each running session is doing) and one line per finished session; in CI
// logs one plain line per finished session and a heartbeat.
type progress struct {
	w           io.Writer  // best effort: a line that cannot be shown is not an error of the run
	status      StatusLine // nil: plain lines
	color       bool
	heartbeat   time.Duration
	concurrency int
	now         func() time.Time

	mu      sync.Mutex
	total   int
	done    int
	failed  int
	cost    float64
	begin   time.Time
	running []*liveSession // in the order they started
	ran     int            // sessions finished after running in this run
	ranTime time.Duration  // their time from start to finish

	stopCh chan struct{}
	wg     sync.WaitGroup
}

// liveSession is a running session as the status line shows it.
type liveSession struct {
	key   string
	start time.Time
	doing string // what it does now: a tool's name, "waiting for model", ...
	runs  bool   // it runs, rather than being recorded as not started
	// shown says the text transcript on the status line's terminal showed the session's
	// result, so the progress does not report the finish a second time.
	shown bool
}

// What a session does, for the status line.
const (
	doingStart   = "starting"
	doingModel   = "waiting for model"
	doingWriting = "writing"
	doingThought = "thinking"
)

func newProgress(o Options, total, concurrency int, now func() time.Time) *progress {
	return &progress{w: o.Progress, status: o.Status, color: o.Color, heartbeat: o.Heartbeat,
		concurrency: max(concurrency, 1), now: now, total: total, begin: now(), stopCh: make(chan struct{})}
}

// start begins the periodic redraw (terminal) or heartbeat (plain); stop ends it.
func (p *progress) start() (stop func()) {
	every := p.heartbeat
	if p.status != nil {
		every = time.Second
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stopCh:
				return
			case <-t.C:
				p.tick()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(p.stopCh)
			p.wg.Wait()
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.status != nil {
				p.status.SetStatus(p.countsLocked())
				p.status.Finish()
			}
		})
	}
}

func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.status != nil {
		p.drawLocked()
		return
	}
	_, _ = fmt.Fprintf(p.w, "[%s]\n", p.countsLocked())
}

// countsLocked is the run's counts: the plain heartbeat, and the head of the status line.
func (p *progress) countsLocked() string {
	return fmt.Sprintf("%d/%d done, %d running, %d failed, $%.4f, %s", p.done, p.total, len(p.running), p.failed,
		p.cost, p.now().Sub(p.begin).Round(time.Second))
}

// drawLocked puts the counts, the ETA and what each running session does on the status
// line, as many sessions as the terminal's width has room for.
func (p *progress) drawLocked() {
	if p.status == nil {
		return
	}
	now := p.now()
	head := p.countsLocked()
	if eta, ok := p.etaLocked(now); ok {
		head += ", ETA " + eta.String()
	}
	width := p.status.Width()
	var b strings.Builder
	b.WriteString(head)
	for i, s := range p.running {
		item := clip(s.key, 40) + ": " + clip(s.doing, 40)
		sep := " · "
		if i == 0 {
			sep = " │ "
		}
		more := ""
		if rest := len(p.running) - i - 1; rest > 0 {
			more = fmt.Sprintf(" · +%d more", rest)
		}
		if width > 0 && utf8.RuneCountInString(b.String()+sep+item+more) > width-1 {
			if rest := fmt.Sprintf("%s+%d more", sep, len(p.running)-i); utf8.RuneCountInString(b.String()+rest) <= width-1 {
				b.WriteString(rest)
			}
			break
		}
		b.WriteString(sep + item)
	}
	p.status.SetStatus(b.String())
}

// etaLocked estimates the time left from the mean duration of the sessions finished so
// far: what each running session still has to go of that mean, and the mean for each
// waiting one, spread over the slots. It is known once a session finished.
func (p *progress) etaLocked(now time.Time) (time.Duration, bool) {
	left := p.total - p.done
	if p.ran == 0 || left == 0 {
		return 0, false
	}
	mean := p.ranTime / time.Duration(p.ran)
	var work time.Duration
	for _, s := range p.running {
		work += max(mean-now.Sub(s.start), 0)
	}
	work += time.Duration(left-len(p.running)) * mean
	eta := work / time.Duration(min(p.concurrency, left))
	return max(eta.Round(time.Second), time.Second), true
}

// started counts a session that begins: to run, or (runs false) to be recorded as not
// started, which does not count towards the ETA.
func (p *progress) started(key string, runs bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = append(p.running, &liveSession{key: key, start: p.now(), doing: doingStart, runs: runs})
	p.drawLocked()
}

// doing records what the session of key does now.
func (p *progress) doing(key, what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.liveLocked(key); s != nil && s.doing != what {
		s.doing = what
		p.drawLocked()
	}
}

// retrying notes that the session of key starts attempt n: the result the transcript
// showed was the previous attempt's.
func (p *progress) retrying(key string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.liveLocked(key); s != nil {
		s.shown = false
		s.doing = fmt.Sprintf("retry, attempt %d", n)
		p.drawLocked()
	}
}

func (p *progress) liveLocked(key string) *liveSession {
	for _, s := range p.running {
		if s.key == key {
			return s
		}
	}
	return nil
}

// reused counts an earlier result kept by resume.
func (p *progress) reused(res *protocol.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if res.Status != protocol.StatusSuccess {
		p.failed++
	}
}

// finished counts the final result of a session, once, and reports it unless the
// transcript on the same terminal showed it already.
func (p *progress) finished(res *protocol.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if res.Status != protocol.StatusSuccess {
		p.failed++
	}
	if res.TotalCostUSD != nil {
		p.cost += *res.TotalCostUSD
	}
	shown := false
	for i, s := range p.running {
		if s.key == res.Key {
			p.running = append(p.running[:i], p.running[i+1:]...)
			if s.runs {
				p.ran++
				p.ranTime += p.now().Sub(s.start)
			}
			shown = s.shown
			break
		}
	}
	if !shown {
		_, _ = fmt.Fprintln(p.w, p.line(res))
	}
	p.drawLocked()
}

// line describes one finished session.
func (p *progress) line(res *protocol.Result) string {
	mark, color := "✓", "\033[32m"
	if res.Status != protocol.StatusSuccess {
		mark, color = "✗", "\033[31m"
	}
	if p.color {
		mark = color + mark + "\033[0m"
	}
	s := fmt.Sprintf("%s %s %s · %d turns · %s", mark, res.Key, res.Status, res.NumTurns,
		(time.Duration(res.DurationMS) * time.Millisecond).Round(10*time.Millisecond))
	if res.TotalCostUSD != nil {
		s += fmt.Sprintf(" · $%.4f", *res.TotalCostUSD)
	}
	if res.Error != nil && res.Status != protocol.StatusSuccess {
		s += " · " + clip(res.Error.Message, 160)
	}
	return s
}

// watch returns the sink that follows a session's events for the status line; shown
// says its text transcript goes to the status line's terminal. It is nil without a
// status line.
func (p *progress) watch(key string, shown bool) sink.Sink {
	if p.status == nil {
		return nil
	}
	return &activity{p: p, key: key, shown: shown}
}

// activity is a sink that tells the progress what a session does: the tool it runs, or
// that it waits for the model.
type activity struct {
	p      *progress
	key    string
	shown  bool
	closed bool // guarded by p.mu
}

// Write notes the step m starts. A sub-agent's events leave the status as its parent's
// Task call set it.
func (a *activity) Write(m protocol.Message) error {
	p := a.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if a.closed {
		return sink.ErrClosed
	}
	s := p.liveLocked(a.key)
	if s == nil || m.Parent != "" {
		return nil
	}
	what := s.doing
	switch m.Kind {
	case protocol.KindSessionStart, protocol.KindToolResult:
		what = doingModel
	case protocol.KindToolCall:
		what = m.Call.Name
	case protocol.KindText:
		what = doingWriting
	case protocol.KindThinking:
		what = doingThought
	case protocol.KindRetry:
		what = fmt.Sprintf("retry %d in %s", m.Attempt, (time.Duration(m.DelayMS) * time.Millisecond).Round(100*time.Millisecond))
	case protocol.KindResult:
		s.shown = a.shown
	default:
		// Other kinds leave the activity as it is.
	}
	if what != s.doing {
		s.doing = what
		p.drawLocked()
	}
	return nil
}

// Close ends the sink.
func (a *activity) Close() error {
	a.p.mu.Lock()
	defer a.p.mu.Unlock()
	a.closed = true
	return nil
}

// clip shortens s to at most n bytes at a character boundary, the "…" that marks a
// cut included.
func clip(s string, n int) string { return textcut.Clip(s, n, textcut.Ellipsis) }
