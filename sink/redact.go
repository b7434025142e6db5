package sink

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/agentrun/agentrun/protocol"
)

// Mask is what a Redactor writes in place of a secret.
const Mask = "***"

// Redactor replaces secrets with Mask in every string of every message before the next
// sink sees it: text and thinking, tool names, ids, inputs and results, errors, retry
// reasons, sub-agent and session fields and the final result.
//
// The rule: every non-empty secret is redacted, however short (a one-byte secret masks
// every occurrence of that byte, so pass only real credentials). Each secret is also
// looked for in the forms JSON encoders write it in, escaped inside a string. Matches
// are taken leftmost first and, at one position, longest first. A JSON tool input or
// structured output is redacted inside its string values (and number literals), so it
// stays valid JSON; a redacted literal becomes the string Mask.
//
// A secret split across consecutive text deltas, or thinking deltas, is still found:
// the shortest tail of a delta that could begin a secret is held back and released with
// the next delta of the same stream, before a message of another kind, or on Close.
// Concatenated, the deltas passed on are the redaction of the whole text. Redactor is
// safe for concurrent use.
type Redactor struct {
	mu     sync.Mutex
	next   Sink
	forms  []string // every secret in every form, longest first
	first  [256]bool
	maxLen int

	held       string // the tail of a delta stream that could begin a secret
	heldKind   protocol.Kind
	heldParent string
}

// NewRedactor returns a sink that redacts secrets and writes to next. Empty secrets are
// ignored; with none left, messages pass unchanged.
func NewRedactor(next Sink, secrets []string) *Redactor {
	r := &Redactor{next: next}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for _, f := range secretForms(s) {
			if !slices.Contains(r.forms, f) {
				r.forms = append(r.forms, f)
			}
		}
	}
	slices.SortStableFunc(r.forms, func(a, b string) int { return len(b) - len(a) })
	for _, f := range r.forms {
		r.first[f[0]] = true
		r.maxLen = max(r.maxLen, len(f))
	}
	return r
}

// secretForms returns s and the forms it takes escaped inside a JSON string (as
// encoding/json writes it with and without HTML escaping, and with "/" escaped) and in
// XML (junit.xml).
func secretForms(s string) []string {
	forms := []string{s}
	for _, html := range []bool{false, true} {
		q := quoteJSON(s, html)
		forms = append(forms, q[1:len(q)-1])
	}
	if strings.Contains(s, "/") {
		forms = append(forms, strings.ReplaceAll(forms[1], "/", `\/`))
	}
	return append(forms, xmlForms(s)...)
}

// xmlEscape writes s as encoding/xml escapes character data and attribute values.
func xmlEscape(w io.Writer, s string) error { return xml.EscapeText(w, []byte(s)) }

// quoteJSON returns s as a JSON string.
func quoteJSON(s string, html bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s) // cannot fail: every string encodes
	return strings.TrimSuffix(buf.String(), "\n")
}

// Write redacts m and writes it to the next sink.
func (r *Redactor) Write(m protocol.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errRelease error
	stream := m.Kind == protocol.KindText ||
		(m.Kind == protocol.KindThinking && m.Signature == "" && m.Redacted == "")
	if r.heldKind != 0 {
		if r.heldKind == m.Kind && r.heldParent == m.Parent && m.Redacted == "" {
			// The same stream, or the end of the same thinking block: continue it.
			m.Text = r.held + m.Text
			r.held, r.heldKind, r.heldParent = "", 0, ""
		} else {
			errRelease = r.release()
		}
	}
	if !stream {
		return errors.Join(errRelease, r.next.Write(r.redactMessage(m)))
	}
	out, held := r.scan(m.Text, true)
	if held != "" {
		r.held, r.heldKind, r.heldParent = held, m.Kind, m.Parent
	}
	if out == "" {
		return errRelease
	}
	// A delta carries nothing but its text and its parent (the encoders write no more).
	m.Text, m.Parent = out, r.redact(m.Parent)
	return errors.Join(errRelease, r.next.Write(m))
}

// Close releases a held tail and closes the next sink.
func (r *Redactor) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.release(), r.next.Close())
}

// release writes the held tail, which did not turn into a secret, as a delta of its own.
func (r *Redactor) release() error {
	if r.heldKind == 0 {
		return nil
	}
	m := protocol.Message{Kind: r.heldKind, Parent: r.redact(r.heldParent), Text: r.redact(r.held)}
	r.held, r.heldKind, r.heldParent = "", 0, ""
	return r.next.Write(m)
}

// redact returns s with every secret masked.
func (r *Redactor) redact(s string) string {
	if s == "" {
		return s
	}
	for _, f := range r.forms {
		if strings.Contains(s, f) {
			out, _ := r.scan(s, false)
			return out
		}
	}
	return s
}

// scan masks the secrets in s. With stream set, it stops at the first position where
// the rest of s could be the beginning of a secret and returns that rest as held.
func (r *Redactor) scan(s string, stream bool) (out, held string) {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if !r.first[s[i]] {
			continue
		}
		if stream && len(s)-i < r.maxLen && r.couldBegin(s[i:]) {
			if last == 0 {
				return s[:i], s[i:]
			}
			b.WriteString(s[last:i])
			return b.String(), s[i:]
		}
		if f := r.matchAt(s[i:]); f != "" {
			b.WriteString(s[last:i])
			b.WriteString(Mask)
			i += len(f) - 1
			last = i + 1
		}
	}
	if last == 0 {
		return s, ""
	}
	b.WriteString(s[last:])
	return b.String(), ""
}

// matchAt returns the longest secret form that s begins with, or "".
func (r *Redactor) matchAt(s string) string {
	for _, f := range r.forms {
		if strings.HasPrefix(s, f) {
			return f
		}
	}
	return ""
}

// couldBegin reports whether tail is a proper prefix of a secret form, which more
// bytes could complete.
func (r *Redactor) couldBegin(tail string) bool {
	for _, f := range r.forms {
		if len(f) > len(tail) && strings.HasPrefix(f, tail) {
			return true
		}
	}
	return false
}
