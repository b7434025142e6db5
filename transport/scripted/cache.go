package scripted

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"github.com/agentrun/agentrun/protocol"
)

// PromptCache models Anthropic's prompt caching in the HTTP form of a Model, for the
// Messages format. Each cache_control breakpoint of a request (on a tool, a system
// block or a message's content block) closes a prefix: the tools, then the system
// prompt, then the messages, up to it. A request reads the longest of its prefixes
// that is cached and readable, and writes the rest up to its last breakpoint; what
// follows that breakpoint is plain input. Its usage says so:
// cache_read_input_tokens, cache_creation_input_tokens and input_tokens.
//
// What a request writes becomes readable only once its answer has begun (the response
// headers are out): requests with the same prefix that arrive before that each write it
// too, as with the API. An entry lives TTL after it was last written or read. A prefix
// shorter than MinTokens is not cached. Token counts are the model's own (a token for
// every four bytes of what a request shows the model).
type PromptCache struct {
	// TTL is an entry's lifetime; zero models no cache.
	TTL time.Duration
	// MinTokens is the shortest prefix cached [1024, as for Claude Sonnet and Opus].
	MinTokens int
}

// DefaultCacheMinTokens is the default PromptCache.MinTokens.
const DefaultCacheMinTokens = 1024

// promptCache is the state of a Model's PromptCache.
type promptCache struct {
	ttl time.Duration
	min int64

	mu        sync.Mutex
	entries   map[[32]byte]*cacheEntry
	nextPrune int // drop the expired entries once there are this many
}

// minPrune is the fewest entries worth a sweep for expired ones.
const minPrune = 4096

// cacheEntry is one cached prefix.
type cacheEntry struct {
	readable bool // the answer of a request that wrote it has begun
	expires  time.Time
}

func newPromptCache(pc PromptCache) *promptCache {
	if pc.TTL <= 0 {
		return nil
	}
	if pc.MinTokens <= 0 {
		pc.MinTokens = DefaultCacheMinTokens
	}
	return &promptCache{ttl: pc.TTL, min: int64(pc.MinTokens), entries: map[[32]byte]*cacheEntry{}, nextPrune: minPrune}
}

// cachePrefix is one prefix a breakpoint closes.
type cachePrefix struct {
	key    [32]byte
	tokens int64
}

// cacheMarks are the breakpoints of a Messages request body.
type cacheMarks struct {
	Tools []struct {
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"tools"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// systemBlock is one block of the system prompt, with its breakpoint if it has one.
type systemBlock struct {
	Text         string          `json:"text"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type cacheMarked struct {
	CacheControl json.RawMessage `json:"cache_control"`
}

// lookback is how many content blocks before a message breakpoint the API also looks
// for a cached prefix ending there (the previous turn's breakpoint, typically).
const lookback = 20

// prefixes returns the prefixes that body's breakpoints close (written), shortest
// first, and the ones a cached entry is looked for at (read): the breakpoints, and for
// a breakpoint in the messages each of the lookback block boundaries before it. req is
// body read back, to measure them. A prefix's key chains the hashes of its parts, so
// that every part of a request is hashed once.
func (m *Model) prefixes(body []byte, req protocol.Request) (read, written []cachePrefix) {
	var marks cacheMarks
	if json.Unmarshal(body, &marks) != nil {
		return nil, nil
	}
	key := sha256.Sum256([]byte("model\x00" + req.Model))
	size := 0 // bytes, as measure counts them
	extend := func(part any, bytes int) bool {
		b, err := json.Marshal(part)
		if err != nil {
			return false
		}
		key = sha256.Sum256(append(key[:], b...))
		size += bytes
		return true
	}
	here := func() cachePrefix { return cachePrefix{key: key, tokens: int64(size / 4)} }
	mark := func() { read, written = append(read, here()), append(written, here()) }
	for i, t := range req.Tools {
		if !extend(t, m.measure(protocol.Request{Tools: []protocol.ToolSpec{t}})) {
			return nil, nil
		}
		if i < len(marks.Tools) && marked(marks.Tools[i].CacheControl) {
			mark()
		}
	}
	// The system prompt is a string (one block, never marked) or blocks, each of which
	// may close a prefix: a session's own tail after the breakpoint is not part of it.
	var system []systemBlock
	if json.Unmarshal(marks.System, &system) != nil {
		system = []systemBlock{{Text: req.System}}
	}
	for i, b := range system {
		n := len(b.Text)
		if i > 0 {
			n++ // the line break req.System joins the blocks with
		}
		if !extend("system\x00"+b.Text, n) {
			return nil, nil
		}
		if marked(b.CacheControl) {
			mark()
		}
	}
	// Walk the message blocks in order, keeping the lookback boundaries before each.
	var recent []cachePrefix
	for i, t := range req.Messages {
		var bs []cacheMarked
		if i < len(marks.Messages) && json.Unmarshal(marks.Messages[i].Content, &bs) != nil {
			bs = nil // string content: one block, never marked
		}
		for j, b := range t.Blocks {
			part := struct {
				Turn  int
				Role  protocol.Role
				Block protocol.Block
			}{i, t.Role, b}
			if !extend(part, m.measure(protocol.Request{Messages: []protocol.Turn{{Role: t.Role, Blocks: []protocol.Block{b}}}})) {
				return nil, nil
			}
			if j < len(bs) && marked(bs[j].CacheControl) {
				read = append(read, recent...)
				mark()
				recent = recent[:0]
				continue
			}
			recent = append(recent, here())
			if len(recent) >= lookback {
				recent = recent[1:]
			}
		}
	}
	return read, written
}

// prune drops the expired entries when there are many.
func (pc *promptCache) prune(now time.Time) {
	if len(pc.entries) < pc.nextPrune {
		return
	}
	for k, e := range pc.entries {
		if !now.Before(e.expires) {
			delete(pc.entries, k)
		}
	}
	pc.nextPrune = max(minPrune, 2*len(pc.entries))
}

func marked(cc json.RawMessage) bool { return len(cc) > 0 && string(cc) != "null" }

// account splits the input of resp, the answer to the Messages request body (req read
// back), into what it reads from the cache, what it writes and plain input, as of now,
// and returns the function to call once the answer has begun, which makes what it
// wrote readable. A nil cache, and a usage a script set, leave resp as it is.
func (pc *promptCache) account(m *Model, body []byte, req protocol.Request, resp *response, now time.Time) (started func()) {
	if pc == nil || resp.usage.CacheRead != 0 || resp.usage.CacheCreation != 0 {
		return func() {}
	}
	reads, writes := m.prefixes(body, req)
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.prune(now)
	var read, last int64
	var hit *cacheEntry
	for _, p := range reads {
		if e := pc.entries[p.key]; p.tokens >= pc.min && e != nil && e.readable && now.Before(e.expires) && p.tokens > read {
			read, hit = p.tokens, e
		}
	}
	if hit != nil {
		hit.expires = now.Add(pc.ttl) // a read refreshes the entry
	}
	var written []*cacheEntry
	for _, p := range writes {
		if p.tokens < pc.min {
			continue
		}
		last = max(last, p.tokens)
		if p.tokens <= read {
			continue
		}
		e := pc.entries[p.key]
		if e == nil || !now.Before(e.expires) {
			e = &cacheEntry{}
			pc.entries[p.key] = e
		}
		e.expires = now.Add(pc.ttl)
		written = append(written, e)
	}
	total := resp.usage.Input
	cached := min(max(read, last), total)
	resp.usage.CacheRead = min(read, total)
	resp.usage.CacheCreation = cached - resp.usage.CacheRead
	resp.usage.Input = total - cached
	return func() {
		pc.mu.Lock()
		defer pc.mu.Unlock()
		for _, e := range written {
			e.readable = true
		}
	}
}
