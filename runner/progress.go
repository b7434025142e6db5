package runner

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/agentrun/agentrun/protocol"
)

// progress shows the run's progress on stderr: a live status line on a terminal, or one
// plain line per finished session and a heartbeat in CI logs.
type progress struct {
	w           io.Writer
	interactive bool
	color       bool
	heartbeat   time.Duration
	now         func() time.Time

	mu      sync.Mutex
	total   int
	done    int
	running int
	failed  int
	cost    float64
	begin   time.Time
	drawn   bool

	stopCh chan struct{}
	wg     sync.WaitGroup
}

func newProgress(o Options, total int, now func() time.Time) *progress {
	return &progress{w: o.Progress, interactive: o.Interactive, color: o.Color, heartbeat: o.Heartbeat,
		now: now, total: total, begin: now(), stopCh: make(chan struct{})}
}

// start begins the periodic redraw (terminal) or heartbeat (plain); stop ends it.
func (p *progress) start() (stop func()) {
	every := p.heartbeat
	if p.interactive {
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
			if p.interactive && p.drawn {
				fmt.Fprintf(p.w, "\r\033[K%s\n", p.statusLocked())
				p.drawn = false
			}
		})
	}
}

func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.interactive {
		p.drawLocked()
		return
	}
	fmt.Fprintf(p.w, "[%s]\n", p.statusLocked())
}

func (p *progress) statusLocked() string {
	return fmt.Sprintf("%d/%d done, %d running, %d failed, $%.4f, %s", p.done, p.total, p.running, p.failed,
		p.cost, p.now().Sub(p.begin).Round(time.Second))
}

func (p *progress) drawLocked() {
	fmt.Fprintf(p.w, "\r\033[K%s", p.statusLocked())
	p.drawn = true
}

func (p *progress) started(string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running++
	if p.interactive {
		p.drawLocked()
	}
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

func (p *progress) finished(res *protocol.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running--
	p.done++
	if res.Status != protocol.StatusSuccess {
		p.failed++
	}
	if res.TotalCostUSD != nil {
		p.cost += *res.TotalCostUSD
	}
	line := p.line(res)
	if p.interactive {
		fmt.Fprintf(p.w, "\r\033[K%s\n", line)
		p.drawLocked()
		return
	}
	fmt.Fprintln(p.w, line)
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

// clip shortens s to at most n bytes at a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
