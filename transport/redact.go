package transport

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
)

// redacted replaces a credential in error messages.
const redacted = "[REDACTED]"

// redactor removes the credentials of one request from the messages of its errors, so
// that a server echoing the key in an error body, or a URL carrying one, never puts it
// into an error, a retry reason or a log.
type redactor struct {
	secrets []string
}

// newRedactor collects the credentials req carries: credential header values, the
// token of an "Authorization: <scheme> <token>" header, and credential query values.
func newRedactor(req *http.Request) redactor {
	var r redactor
	for _, k := range []string{"X-Api-Key", "Api-Key", "X-Goog-Api-Key", "Authorization", "Proxy-Authorization"} {
		for _, v := range req.Header.Values(k) {
			v = strings.TrimSpace(v)
			r.add(v)
			if _, token, ok := strings.Cut(v, " "); ok {
				r.add(strings.TrimSpace(token))
			}
		}
	}
	if req.URL != nil {
		q := req.URL.Query()
		for _, k := range []string{"key", "api_key", "apikey", "access_token", "token"} {
			for _, v := range q[k] {
				r.add(v)
			}
		}
	}
	// Longest first, so a token inside a longer secret does not leave a remainder.
	slices.SortFunc(r.secrets, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return r
}

func (r *redactor) add(s string) {
	if s != "" {
		r.secrets = append(r.secrets, s)
	}
}

// redact returns e, or a copy of it whose message holds no credential.
func (r redactor) redact(e *Error) *Error {
	if e == nil {
		return nil
	}
	msg := e.Message
	for _, s := range r.secrets {
		msg = strings.ReplaceAll(msg, s, redacted)
	}
	if msg == e.Message {
		return e
	}
	c := *e
	c.Message = msg
	return &c
}
