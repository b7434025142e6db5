package sink_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

// TestParseFormat checks the names of the formats, "human" for text, the subset a
// command allows, and the message listing them.
func TestParseFormat(t *testing.T) {
	t.Parallel()
	runFormats := []sink.Format{sink.FormatText, sink.FormatStreamJSON, sink.FormatClaude}
	tests := map[string]struct {
		name    string
		allowed []sink.Format
		want    sink.Format
		wantErr string
	}{
		"text":                  {name: "text", want: sink.FormatText},
		"human is text":         {name: "human", want: sink.FormatText},
		"stream-json":           {name: "stream-json", want: sink.FormatStreamJSON},
		"claude":                {name: "claude", want: sink.FormatClaude},
		"resp":                  {name: "resp", want: sink.FormatRESP},
		"unknown":               {name: "xml", wantErr: `"xml": want text, stream-json, claude or resp`},
		"empty":                 {name: "", wantErr: `"": want text, stream-json, claude or resp`},
		"allowed":               {name: "claude", allowed: runFormats, want: sink.FormatClaude},
		"human, allowed text":   {name: "human", allowed: runFormats, want: sink.FormatText},
		"not among the allowed": {name: "resp", allowed: runFormats, wantErr: `"resp": want text, stream-json or claude`},
		"the only one allowed":  {name: "text", allowed: []sink.Format{sink.FormatRESP}, wantErr: `"text": want resp`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := sink.ParseFormat(tt.name, tt.allowed...)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestForFormat checks that each format's sink writes what that format's own sink
// writes, with the options that format takes, and that an unknown one is an error.
func TestForFormat(t *testing.T) {
	t.Parallel()
	env := protocol.Envelope{SessionID: "s1", JobID: "fix"}
	tests := map[sink.Format]func(w io.Writer) sink.Sink{
		sink.FormatText:       func(w io.Writer) sink.Sink { return sink.NewText(w, sink.TextOptions{Prefix: "[fix] "}) },
		sink.FormatStreamJSON: func(w io.Writer) sink.Sink { return sink.NewStreamJSON(w, env) },
		sink.FormatClaude:     func(w io.Writer) sink.Sink { return sink.NewClaude(w, "v1.2.3") },
		sink.FormatRESP:       func(w io.Writer) sink.Sink { return sink.NewRESP(w) },
	}
	msgs := []protocol.Message{claudeStart(), {Kind: protocol.KindText, Text: "Looking."}, claudeResult(protocol.StatusSuccess, "")}
	opts := sink.FormatOptions{Envelope: env, Version: "v1.2.3", Text: sink.TextOptions{Prefix: "[fix] "}}
	for f, own := range tests {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			var got, want bytes.Buffer
			s, err := sink.ForFormat(f, &got, opts)
			require.NoError(t, err)
			writeAll(t, s, msgs...)
			require.NoError(t, s.Close())
			o := own(&want)
			writeAll(t, o, msgs...)
			require.NoError(t, o.Close())
			require.NotEmpty(t, want.String())
			assert.Equal(t, want.String(), got.String())
		})
	}
	t.Run("unknown", func(t *testing.T) {
		t.Parallel()
		_, err := sink.ForFormat("human", io.Discard, opts)
		assert.EqualError(t, err, `output format "human": want text, stream-json, claude or resp`)
	})
}
