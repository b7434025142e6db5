// Package transporttest serves recorded provider streams over real loopback HTTP for
// tests, in small writes that split lines and multibyte characters anywhere, and runs
// the golden-file and fuzz checks every provider's decoder must pass.
package transporttest

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Response is one scripted HTTP response.
type Response struct {
	// Status defaults to 200.
	Status int
	// Header is added to the response; Content-Type defaults to text/event-stream.
	Header map[string]string
	// Body is written in chunks of 1 to MaxChunk bytes (MaxChunk 0 means 7), each
	// flushed on its own.
	Body     []byte
	MaxChunk int
	// Hang, when set, makes the handler stop writing after Body and wait for the
	// client to go away (a stalled stream).
	Hang bool
	// Cut, when set, makes the handler drop the connection after Body without ending
	// the response properly.
	Cut bool
}

// Server answers requests with Responses in order, repeating the last one, and records
// every request it receives.
type Server struct {
	*httptest.Server
	responses []Response

	mu       sync.Mutex
	received []Received
}

// Received is one request the server got.
type Received struct {
	Header http.Header
	Body   []byte
	// At is when the request reached the handler, by the real clock.
	At time.Time
}

// NewServer starts a loopback server and closes it when the test ends.
func NewServer(t testing.TB, responses ...Response) *Server {
	t.Helper()
	s := &Server{responses: responses}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := Received{Header: r.Header.Clone(), At: time.Now()}
		rec.Body = readAll(r)
		s.mu.Lock()
		n := len(s.received)
		s.received = append(s.received, rec)
		resp := s.responses[min(n, len(s.responses)-1)]
		s.mu.Unlock()
		Serve(w, r, resp, rand.New(rand.NewPCG(uint64(n+1), 7)))
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests returns the bodies of every request received so far, in order.
func (s *Server) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(s.received))
	for i, r := range s.received {
		out[i] = r.Body
	}
	return out
}

// Received returns every request received so far, in order.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

func readAll(r *http.Request) []byte {
	var buf []byte
	p := make([]byte, 4096)
	for {
		n, err := r.Body.Read(p)
		buf = append(buf, p[:n]...)
		if err != nil {
			return buf
		}
	}
}

// Serve writes resp to w in small flushed chunks chosen by rnd.
func Serve(w http.ResponseWriter, r *http.Request, resp Response, rnd *rand.Rand) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	for k, v := range resp.Header {
		h.Set(k, v)
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	flusher, _ := w.(http.Flusher)
	maxChunk := resp.MaxChunk
	if maxChunk <= 0 {
		maxChunk = 7
	}
	body := resp.Body
	for len(body) > 0 {
		n := min(1+rnd.IntN(maxChunk), len(body))
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		body = body[n:]
	}
	switch {
	case resp.Hang:
		<-r.Context().Done()
	case resp.Cut:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close() // cutting the connection is the point
			}
		}
	}
}
