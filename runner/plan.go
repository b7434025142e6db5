package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
)

// Shard selects sessions Index, Index+Total, … of the sorted session list (0-based).
// The zero Shard selects everything.
type Shard struct {
	Index int `json:"index"`
	Total int `json:"total"`
}

// String returns "I/N", or "" for the zero Shard.
func (s Shard) String() string {
	if s.Total == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Total)
}

// ParseShard reads "I/N" with 0 ≤ I < N.
func ParseShard(v string) (Shard, error) {
	var s Shard
	if _, err := fmt.Sscanf(v, "%d/%d", &s.Index, &s.Total); err != nil || fmt.Sprintf("%d/%d", s.Index, s.Total) != v {
		return Shard{}, fmt.Errorf("shard %q: want I/N, such as 0/4", v)
	}
	if s.Total < 1 || s.Index < 0 || s.Index >= s.Total {
		return Shard{}, fmt.Errorf("shard %q: want 0 <= I < N", v)
	}
	return s, nil
}

// Plan is what a run will do.
type Plan struct {
	// All is every session of the spec, sorted by key.
	All []jobs.Session
	// Run are the sessions this run starts, sorted by key.
	Run []jobs.Session
	// Reused are earlier results that resume keeps instead of running again.
	Reused []*protocol.Result
	// Resolved are the provider and model of each session of Run, in order, when
	// Options.Resolve is set.
	Resolved []ProviderInfo
	// Excluded counts sessions left out by the filter or the shard.
	Excluded int
	// Concurrency is the number of sessions run at once.
	Concurrency int
	// SpecDigest identifies the expanded spec; SessionsDigest the full sorted list of
	// session keys (the same in every shard of one spec).
	SpecDigest, SessionsDigest string
}

// Plan expands spec and decides which sessions to run.
func (r *Runner) Plan(spec *jobs.Spec) (*Plan, error) {
	all, err := spec.Sessions()
	if err != nil {
		return nil, err
	}
	p := &Plan{All: all, SpecDigest: jobs.DigestOf(all), SessionsDigest: keysDigest(all)}
	p.Concurrency = spec.Concurrency
	if r.opts.Concurrency > 0 {
		p.Concurrency = r.opts.Concurrency
	}
	if p.Concurrency <= 0 {
		p.Concurrency = jobs.DefaultConcurrency
	}
	filters := splitFilter(r.opts.Filter)
	matched := false
	var reused []jobs.Session // the sessions of p.Reused
	for i, s := range all {
		match := matchFilter(filters, s)
		matched = matched || match
		if r.opts.Shard.Total > 0 && i%r.opts.Shard.Total != r.opts.Shard.Index {
			p.Excluded++
			continue
		}
		if !match {
			p.Excluded++
			continue
		}
		if r.opts.Resume || r.opts.RerunFailed || r.opts.Retry != nil {
			if prev := r.previous(s); prev != nil && !retried(prev, r.retryClasses(), r.opts.RerunFailed) {
				p.Reused = append(p.Reused, prev)
				reused = append(reused, s)
				continue
			}
		}
		p.Run = append(p.Run, s)
	}
	if !matched {
		return nil, fmt.Errorf("%w: --filter %q matches no session key or job id (%s)", ErrNoMatch, r.opts.Filter, someKeys(all))
	}
	if r.opts.Resolve == nil {
		return p, nil
	}
	for _, s := range p.Run {
		info, err := r.opts.Resolve(s)
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", s.Key, err)
		}
		p.Resolved = append(p.Resolved, info)
	}
	if err := r.sameModels(reused); err != nil {
		return nil, err
	}
	return p, nil
}

// retryClasses are the failure classes that resume runs again.
func (r *Runner) retryClasses() []string {
	if r.opts.Retry != nil {
		return r.opts.Retry
	}
	return DefaultRetry
}

// ErrNoMatch means the filter selects none of the spec's sessions: a run of nothing
// would look like a green run.
var ErrNoMatch = errors.New("nothing to run")

// someKeys names a few of the sessions, for a message.
func someKeys(all []jobs.Session) string {
	const shown = 3
	var keys []string
	for _, s := range all[:min(len(all), shown)] {
		keys = append(keys, s.Key)
	}
	if len(all) > shown {
		return fmt.Sprintf("the spec's %d sessions are %s, …", len(all), strings.Join(keys, ", "))
	}
	return "the spec's sessions are " + strings.Join(keys, ", ")
}

func splitFilter(f string) []string {
	var out []string
	for _, g := range strings.Split(f, ",") {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return out
}

// matchFilter reports whether s matches one of the globs (all sessions match none).
func matchFilter(globs []string, s jobs.Session) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, _ := path.Match(g, s.Key); ok {
			return true
		}
		if ok, _ := path.Match(g, s.JobID); ok {
			return true
		}
	}
	return false
}

// ValidateFilter checks the globs of a --filter value.
func ValidateFilter(f string) error {
	for _, g := range splitFilter(f) {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("filter %q: %w", g, err)
		}
	}
	return nil
}

// previous reads the earlier result of s in the output folder when it belongs to the
// same session digest.
func (r *Runner) previous(s jobs.Session) *protocol.Result {
	b, err := os.ReadFile(filepath.Join(r.opts.Out, SessionsDir, s.Key, ResultFile))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.log.Warn("unreadable earlier result; the session runs again", zapKey(s.Key), zapErr(err))
		}
		return nil
	}
	var res protocol.Result
	if err := json.Unmarshal(b, &res); err != nil || res.SpecDigest != s.Digest || !res.Status.Valid() {
		return nil
	}
	res.Key = s.Key
	return &res
}

// keysDigest is the sha256 of the sorted session keys, one per line.
func keysDigest(all []jobs.Session) string {
	h := sha256.New()
	for _, s := range all {
		h.Write([]byte(s.Key))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}
