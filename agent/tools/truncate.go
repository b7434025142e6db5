package tools

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentrun/agentrun/textcut"
)

// minTruncate is the smallest cap that still fits a marker; below it Truncate keeps
// only a head.
const minTruncate = 64

// marker is the line that replaces the bytes truncation drops.
func marker(dropped int64) string {
	return "\n[... truncated " + strconv.FormatInt(dropped, 10) + " bytes ...]\n"
}

// Truncate returns s when it fits in max bytes. Otherwise it keeps a head and a tail
// of s around the marker "[... truncated N bytes ...]" (on its own line, N counting
// the bytes left out) so that the result is at most max bytes; neither cut splits a
// UTF-8 character. A max of zero or less means no limit. For max below 64 only a
// head is kept, without a marker.
func Truncate(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	if max < minTruncate {
		return textcut.Head(s, max)
	}
	mid := textcut.HeadLen(s, len(s)/2)
	return joinCut(s[:mid], 0, s[mid:], max)
}

// joinCut joins head, a gap of dropped bytes and tail into at most max bytes (when
// max >= minTruncate), cutting the end of head and the start of tail on character
// boundaries and marking the gap. head must end and tail must start on a character
// boundary of the original text.
func joinCut(head string, dropped int64, tail string, max int) string {
	if dropped == 0 && len(head)+len(tail) <= max {
		return head + tail
	}
	total := int64(len(head)) + dropped + int64(len(tail))
	avail := max - len(marker(total))
	if avail < 0 {
		avail = 0
	}
	hb := min(len(head), avail/2)
	tb := min(len(tail), avail-hb)
	hb = min(len(head), avail-tb)
	hb = textcut.HeadLen(head, hb)
	ts := textcut.TailStart(tail, tb)
	dropped += int64(len(head)-hb) + int64(ts)
	return head[:hb] + marker(dropped) + tail[ts:]
}

// sanitize replaces invalid UTF-8 with U+FFFD.
func sanitize(b []byte) string {
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// capture keeps the first limit bytes and the last limit bytes written to it and
// counts the rest, so that huge output costs bounded memory. It is not safe for
// concurrent use.
type capture struct {
	limit int
	head  []byte
	ring  []byte // allocated when head is full
	start int    // index of the oldest byte in ring
	n     int    // bytes held in ring
	total int64
}

func newCapture(limit int) *capture {
	return &capture{limit: max(limit, 1)}
}

// Write records p. It never fails.
func (c *capture) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	written := len(p)
	if room := c.limit - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return written, nil
	}
	if c.ring == nil {
		c.ring = make([]byte, c.limit)
	}
	size := len(c.ring)
	if len(p) >= size {
		copy(c.ring, p[len(p)-size:])
		c.start, c.n = 0, size
		return written, nil
	}
	end := (c.start + c.n) % size
	k := copy(c.ring[end:], p)
	copy(c.ring, p[k:])
	c.n += len(p)
	if c.n > size {
		c.start = (c.start + c.n - size) % size
		c.n = size
	}
	return written, nil
}

// tail returns the bytes held in the ring, oldest first.
func (c *capture) tail() []byte {
	out := make([]byte, c.n)
	k := copy(out, c.ring[c.start:min(c.start+c.n, len(c.ring))])
	copy(out[k:], c.ring[:c.n-k])
	return out
}

// kept is the number of bytes the capture holds.
func (c *capture) kept() int { return len(c.head) + c.n }

// render returns the captured text in at most budget bytes (when budget >= 64),
// with invalid UTF-8 replaced and a marker where bytes were left out.
func (c *capture) render(budget int) string {
	tail := c.tail()
	dropped := c.total - int64(len(c.head)) - int64(len(tail))
	if dropped == 0 {
		return Truncate(sanitize(append(append([]byte(nil), c.head...), tail...)), budget)
	}
	head := c.head
	// Cut a character split by the capture limits, and count it as dropped.
	for i := len(head) - 1; i >= 0 && i >= len(head)-utf8.UTFMax; i-- {
		if utf8.RuneStart(head[i]) {
			if !utf8.FullRune(head[i:]) {
				dropped += int64(len(head) - i)
				head = head[:i]
			}
			break
		}
	}
	i := 0
	for i < len(tail) && i < utf8.UTFMax && !utf8.RuneStart(tail[i]) {
		i++
	}
	dropped += int64(i)
	if budget < minTruncate {
		return Truncate(sanitize(head), budget)
	}
	return joinCut(sanitize(head), dropped, sanitize(tail[i:]), budget)
}
