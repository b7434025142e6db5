package providers

import (
	"fmt"
	"slices"

	"github.com/agentrun/agentrun/jobs"
)

// Check resolves the provider of every session once and loads the scripts of the
// scripted ones, so that a missing key or a broken script stops a run before anything
// starts. It returns the summaries' warnings: whether the scripted model stands in for
// a real one.
func (p *Pool) Check(sessions []jobs.Session) ([]string, error) {
	if err := p.checkMatrix(sessions); err != nil {
		return nil, err
	}
	fallback := false
	var models []string
	for _, s := range sessions {
		c, err := p.resolve(s.Settings)
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", s.Key, err)
		}
		// Load the scripts the scripted model will play, so a broken one stops the run
		// before anything starts.
		if c.name == "scripted" && c.script != "" {
			if _, err := p.scripted(c.script); err != nil {
				return nil, fmt.Errorf("session %s: %w", s.Key, err)
			}
		}
		if c.fallback {
			fallback = true
			if c.model != defaultModels["scripted"] && !slices.Contains(models, c.model) {
				models = append(models, c.model)
			}
		}
	}
	if !fallback {
		return nil, nil
	}
	return []string{fallbackWarning(models)}, nil
}
