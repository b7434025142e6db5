package runner

import (
	"github.com/agentrun/agentrun/agent"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sink"
)

// newStore returns the conversation store of a session folder. messages.jsonl is an
// artifact like the streams, so when the session has secrets they are masked in what
// is saved; the agent keeps the real turns in memory and the model still sees them.
func newStore(dir string, secrets []string) sessionStore {
	store := &agent.DirStore{Dir: dir}
	for _, s := range secrets {
		if s != "" {
			// The redactor masks strings only; nothing is written to it.
			return &redactingStore{next: store, r: sink.NewRedactor(nil, secrets)}
		}
	}
	return store
}

// sessionStore is a conversation store the runner closes when the attempt ends.
type sessionStore interface {
	agent.Store
	Close() error
}

// redactingStore masks secrets in the turns and summaries it saves. What it loads was
// masked when it was saved.
type redactingStore struct {
	next *agent.DirStore
	r    *sink.Redactor
}

func (s *redactingStore) Close() error { return s.next.Close() }

func (s *redactingStore) Load() (agent.State, error) { return s.next.Load() }

func (s *redactingStore) Append(turns []protocol.Turn) error {
	return s.next.Append(s.turns(turns))
}

func (s *redactingStore) Replace(turns []protocol.Turn, summary string) error {
	return s.next.Replace(s.turns(turns), s.text(summary))
}

func (s *redactingStore) SaveStats(st agent.Stats) error { return s.next.SaveStats(st) }

// turns returns masked copies of turns; the caller's turns are not changed.
func (s *redactingStore) turns(turns []protocol.Turn) []protocol.Turn {
	out := make([]protocol.Turn, len(turns))
	for i, t := range turns {
		blocks := make([]protocol.Block, len(t.Blocks))
		for j, b := range t.Blocks {
			// A thinking signature is the provider's opaque token and goes back unchanged.
			b.Text, b.Data, b.Content = s.text(b.Text), s.text(b.Data), s.text(b.Content)
			b.ID, b.Name, b.ToolUseID = s.text(b.ID), s.text(b.Name), s.text(b.ToolUseID)
			if len(b.Input) > 0 {
				b.Input = s.r.JSON(b.Input)
			}
			blocks[j] = b
		}
		out[i] = protocol.Turn{Role: t.Role, Blocks: blocks}
	}
	return out
}

// text masks the secrets in one string, with the rules of the artifacts' redactor.
func (s *redactingStore) text(v string) string {
	if v == "" {
		return v
	}
	return s.r.String(v)
}
