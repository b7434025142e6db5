// Package scripted is agentrun's built-in deterministic model: it answers requests from
// a Script (or, without one, a small demo policy that uses the offered tools), either
// in-process as a provider or as an HTTP handler that serves the same responses in the
// Anthropic Messages, OpenAI Chat Completions and OpenAI Responses streaming formats.
package scripted

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"sync"
	"time"

	"github.com/agentrun/agentrun/protocol"
)

// CompactMarker marks a compaction request: when the last user message of a request
// contains it, the model answers with a five-field summary of the conversation instead
// of following its script. It is protocol.CompactMarker, which the agent writes into
// its compaction instruction.
const CompactMarker = protocol.CompactMarker

// FinishedText is the text of the response to every request past a script's last step.
const FinishedText = "(script finished)"

// SessionHeader names the HTTP request header whose value identifies a session for
// counting fault attempts; without it the request body's hash is used.
const SessionHeader = "X-Agentrun-Session"

// DefaultChunkRunes is the default size of text and thinking deltas, in runes.
const DefaultChunkRunes = 16

// Options configure a Model. Zero values take the defaults in brackets.
type Options struct {
	// Sessions are selected by the session an HTTP request names in its SessionHeader
	// (agentrun sends the session key, such as "add-shout+model=gpt-5.4.r2"), before
	// Scripts: so a server can play every session of a job spec its own script, also
	// when the sessions share a model name. The map and the scripts must not change
	// after New.
	Sessions map[string]*Script
	// Scripts are selected by the request's model name. The map and the scripts must
	// not change after New.
	Scripts map[string]*Script
	// Default answers requests whose model has no script; nil means the demo policy.
	Default *Script
	// FirstByte is the delay before the first byte of a response; ChunkDelay the delay
	// before every later text, thinking or tool-input delta [0].
	FirstByte, ChunkDelay time.Duration
	// ChunkRunes is the largest text or thinking delta, in runes [DefaultChunkRunes].
	ChunkRunes int
	// Now is the clock behind the timestamps of the wire formats [time.Now].
	Now func() time.Time
	// RateLimit is what the HTTP form allows per minute [none].
	RateLimit RateLimit
	// PromptCache models Anthropic's prompt cache in the HTTP form [none].
	PromptCache PromptCache
}

// Model is the scripted model. It is safe for concurrent use by many sessions.
type Model struct {
	opts Options

	mu       sync.Mutex
	attempts map[attemptKey]int
	lengths  lengthCache
	limits   *rateLimits  // nil without a RateLimit
	cache    *promptCache // nil without a PromptCache
}

// attemptKey identifies the attempts of one step of one agent (the session or one of
// its sub-agents, by parent) of one session.
type attemptKey struct {
	session string
	model   string
	parent  string
	step    int
}

// New returns a model with opts.
func New(opts Options) *Model {
	if opts.ChunkRunes <= 0 {
		opts.ChunkRunes = DefaultChunkRunes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Model{opts: opts, attempts: map[attemptKey]int{}, limits: newRateLimits(opts.RateLimit, opts.Now()),
		cache: newPromptCache(opts.PromptCache)}
}

// script returns the script for a request of the named session ("" when the request
// names none) to model, or nil for the demo policy.
func (m *Model) script(named, model string) *Script {
	if s, ok := m.opts.Sessions[named]; ok && s != nil && named != "" {
		return s
	}
	if s, ok := m.opts.Scripts[model]; ok && s != nil {
		return s
	}
	return m.opts.Default
}

// respond decides the answer to req of the named session ("" when the request names
// none), counting the attempt when the step has a fault under the key that session
// returns (computed only when needed).
func (m *Model) respond(req protocol.Request, named string, session func() string) *response {
	if isCompaction(req) {
		return m.finish(req, -1, compactStep(req), nil)
	}
	step := stepOf(req.Messages, idPrefix(req.Parent))
	s := m.script(named, req.Model)
	if s == nil {
		return m.finish(req, step, demoStep(req, step), nil)
	}
	steps := agentSteps(s.Steps, req.Parent)
	if step >= len(steps) {
		return m.finish(req, step, Step{Text: FinishedText}, nil)
	}
	st := steps[step]
	if st.Fault == nil {
		return m.finish(req, step, st, nil)
	}
	k := attemptKey{session: session(), model: req.Model, parent: req.Parent, step: step}
	return m.finish(req, step, st, m.attempt(k, st.Fault))
}

// attempt counts one attempt of a step and returns its fault, or nil when the step
// has none or its failing attempts are used up.
func (m *Model) attempt(k attemptKey, f *Fault) *Fault {
	if f == nil {
		return nil
	}
	m.mu.Lock()
	m.attempts[k]++
	n := m.attempts[k]
	m.mu.Unlock()
	if n > f.Times {
		return nil
	}
	return f
}

// requestKey identifies the session of an in-process request: a hash of everything in
// it, so a session that calls again with the same request makes its next attempt.
func requestKey(req protocol.Request) string {
	h := sha256.New()
	field := func(s string) {
		writeLen(h, len(s))
		h.Write([]byte(s))
	}
	field(req.Model)
	field(req.Parent)
	field(req.System)
	for _, t := range req.Messages {
		writeLen(h, int(t.Role))
		for _, b := range t.Blocks {
			writeLen(h, int(b.Type))
			for _, s := range []string{b.Text, b.Signature, b.Data, b.ID, b.Name, string(b.Input), b.ToolUseID, b.Content} {
				field(s)
			}
		}
	}
	for _, t := range req.Tools {
		field(t.Name)
		field(t.Description)
		field(string(t.InputSchema))
	}
	return string(h.Sum(nil))
}

func writeLen(h hash.Hash, n int) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}
