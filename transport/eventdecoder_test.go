package transport

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/transport/sse"
)

// wordFormat is the event switch of a tiny SSE format: each data word is a text
// message, "pair" is two, "stop" completes the stream, "fail" pushes "last" and breaks
// it. At the end of the body it finishes, fails or does neither, as atEnd says.
type wordFormat struct {
	*Out
	atEnd string // "finish", "fail" or ""
	seen  []string
	ends  int
}

func (f *wordFormat) event(ev sse.Event) {
	word := string(ev.Data)
	f.seen = append(f.seen, word)
	text := func(s string) protocol.Message { return protocol.Message{Kind: protocol.KindText, Text: s} }
	switch word {
	case "pair":
		f.Push(text("one"), text("two"))
	case "stop":
		f.Push(protocol.Message{Kind: protocol.KindStop, Reason: "end_turn"})
		f.Finish()
	case "fail":
		f.Push(text("last"))
		f.Fail(&Error{Kind: protocol.ErrServer, Message: "failed"})
	default:
		f.Push(text(word))
	}
}

func (f *wordFormat) end() {
	f.ends++
	switch f.atEnd {
	case "finish":
		f.Push(protocol.Message{Kind: protocol.KindStop, Reason: "end_turn"})
		f.Finish()
	case "fail":
		f.Fail(&Error{Kind: protocol.ErrStream, Message: "no stop"})
	}
}

func TestEventDecoder(t *testing.T) {
	errRead := errors.New("connection reset")
	tests := map[string]struct {
		body    io.Reader
		limits  protocol.Limits
		atEnd   string
		want    []string           // the messages' texts, "<stop>" for a stop
		seen    []string           // the events the switch was given
		ends    int                // how often end was called
		wantErr protocol.ErrorKind // the *Error's Kind, or "read" for errRead
		retry   RetryVerdict
	}{
		"one event's messages, then the next event's": {
			body: strings.NewReader("data: pair\n\ndata: three\n\ndata: stop\n\n"),
			want: []string{"one", "two", "three", "<stop>"}, seen: []string{"pair", "three", "stop"},
		},
		"comments are not events": {
			body: strings.NewReader(": keep-alive\n\ndata: a\n\n: OPENROUTER PROCESSING\n\ndata: stop\n\n"),
			want: []string{"a", "<stop>"}, seen: []string{"a", "stop"},
		},
		"finish stops the reading": {
			body: strings.NewReader("data: stop\n\ndata: after\n\n"),
			want: []string{"<stop>"}, seen: []string{"stop"},
		},
		"fail hands out what was pushed first": {
			body: strings.NewReader("data: a\n\ndata: fail\n\ndata: after\n\n"),
			want: []string{"a", "last"}, seen: []string{"a", "fail"}, wantErr: protocol.ErrServer,
		},
		"a clean end the format counts as complete": {
			body: strings.NewReader("data: a\n\n"), atEnd: "finish",
			want: []string{"a", "<stop>"}, seen: []string{"a"}, ends: 1,
		},
		"a clean end the format fails": {
			body: strings.NewReader("data: a\n\n"), atEnd: "fail",
			want: []string{"a"}, seen: []string{"a"}, ends: 1, wantErr: protocol.ErrStream,
		},
		"a clean end the format says nothing of is cut short": {
			body: strings.NewReader("data: a\n\n"),
			want: []string{"a"}, seen: []string{"a"}, ends: 1, wantErr: protocol.ErrStream,
		},
		"an empty body": {
			body: strings.NewReader(""), atEnd: "fail", ends: 1, wantErr: protocol.ErrStream,
		},
		"a line past the limits is too large and final": {
			body:   strings.NewReader("data: a\n\ndata: " + strings.Repeat("x", 70<<10) + "\n\ndata: stop\n\n"),
			limits: protocol.Limits{MaxResponseBytes: 1, MaxToolInputBytes: 1},
			want:   []string{"a"}, seen: []string{"a"}, wantErr: protocol.ErrTooLarge, retry: RetryNo,
		},
		"the same line within the default limits": {
			body: strings.NewReader("data: " + strings.Repeat("x", 70<<10) + "\n\ndata: stop\n\n"),
			want: []string{strings.Repeat("x", 70<<10), "<stop>"}, seen: []string{strings.Repeat("x", 70<<10), "stop"},
		},
		"a read error is returned as it is": {
			body: io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(errRead)), atEnd: "finish",
			want: []string{"a"}, seen: []string{"a"}, wantErr: "read",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			f := &wordFormat{atEnd: tt.atEnd}
			var d EventDecoder
			f.Out = InitEventDecoder(&d, tt.body, f.event, f.end)
			if tt.limits != (protocol.Limits{}) {
				d.SetLimits(tt.limits)
			}
			assert.Equal(t, tt.limits.WithDefaults(), d.Limits())
			var got []string
			for d.Next() {
				m := d.Message()
				if m.Kind == protocol.KindStop {
					got = append(got, "<stop>")
					continue
				}
				got = append(got, m.Text)
			}
			assert.False(t, d.Next(), "Next stays false after the end")
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.seen, f.seen)
			assert.Equal(t, tt.ends, f.ends, "end is called once, and only at a clean end before Finish")
			switch tt.wantErr {
			case "":
				require.NoError(t, d.Err())
			case "read":
				require.ErrorIs(t, d.Err(), errRead)
			default:
				var te *Error
				require.ErrorAs(t, d.Err(), &te)
				assert.Equal(t, tt.wantErr, te.Kind)
				assert.Equal(t, tt.retry, te.ShouldRetry)
			}
		})
	}
}
