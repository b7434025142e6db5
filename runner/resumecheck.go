package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
)

// ErrResumeMismatch means earlier results that resume would keep came from another
// provider or model than this run resolves: pass rates of two models would mix in one
// summary.
var ErrResumeMismatch = errors.New("earlier results are of another provider or model")

// sameModels checks that every session resume keeps ran on the provider and model
// Options.Resolve gives it now. An earlier session that never reached a model (its
// session_start names no provider) has nothing to compare.
func (r *Runner) sameModels(reused []jobs.Session) error {
	var first string
	differ := 0
	for _, s := range reused {
		then, ok := r.earlierProvider(s)
		if !ok {
			continue
		}
		now, err := r.opts.Resolve(s)
		if err != nil {
			return fmt.Errorf("session %s: %w", s.Key, err)
		}
		if then == now {
			continue
		}
		differ++
		if first == "" {
			first = fmt.Sprintf("%s ran on provider %s, model %s, and this run would use provider %s, model %s",
				s.Key, then.Name, then.Model, now.Name, now.Model)
		}
	}
	switch differ {
	case 0:
		return nil
	case 1:
	default:
		first += fmt.Sprintf(" (%d sessions differ)", differ)
	}
	return fmt.Errorf("%w: %s; their results would mix in one summary: run into another --out, or with the provider and model of the earlier run",
		ErrResumeMismatch, first)
}

// earlierProvider reads the provider and model from the session_start of the earlier
// events.jsonl of s.
func (r *Runner) earlierProvider(s jobs.Session) (ProviderInfo, bool) {
	f, err := os.Open(filepath.Join(r.opts.Out, SessionsDir, s.Key, EventsFile))
	if err != nil {
		return ProviderInfo{}, false
	}
	defer func() { _ = f.Close() }()
	events := protocol.NewEventReader(f)
	for events.Next() {
		if m := events.Message(); m.Kind == protocol.KindSessionStart && m.Session != nil {
			return ProviderInfo{Name: m.Session.Provider, Model: m.Session.Model}, m.Session.Provider != ""
		}
	}
	return ProviderInfo{}, false
}
