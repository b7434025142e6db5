package jobs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
)

// Session is one run of one job: a combination of its matrix values and one repeat,
// with every setting resolved and the prompt rendered.
type Session struct {
	// Key identifies the session within the run and names its artifact directory:
	// the job id, then "+name=value" for each matrix value in name order, then ".rN"
	// when the job repeats, as in "fix-vet+model=gpt-5.4.r2". It is unique in the run,
	// also when compared without regard to case, and uses only [A-Za-z0-9._+=-].
	Key   string `json:"key"`
	JobID string `json:"job_id"`
	// Repeat is the 1-based index of this session among its job's repeats; it is 1
	// for a job without repeat.
	Repeat int `json:"repeat"`
	// Repeats is the job's repeat count (1 without repeat).
	Repeats int `json:"repeats"`
	// Matrix holds this session's matrix values as written; it is empty, never nil,
	// for a job without matrix. MatrixKeys lists its names in order.
	Matrix map[string]string `json:"matrix"`
	// Prompt and System are the rendered templates.
	Prompt string `json:"prompt"`
	System string `json:"system"`
	// Settings are the resolved settings.
	Settings Resolved `json:"settings"`
	// Checks run after the agent stops; each Timeout is set (a check without one gets
	// the session's tool_timeout). Never nil.
	Checks []Check `json:"checks"`
	// OutputSchema is the job's output_schema as compact JSON, nil when it has none.
	// CompileOutputSchema compiles it.
	OutputSchema json.RawMessage `json:"output_schema"`
	// Digest is the hex SHA-256 of everything above in a canonical form, with paths
	// taken relative to the spec's directory. It changes when anything that affects the
	// session changes, and only then.
	Digest string `json:"digest"`

	job     int    // index of the job in Spec.Jobs
	specDir string // for relative paths in the digest
}

// MatrixKeys returns the names of s.Matrix in sorted order, the order of the key.
func (s Session) MatrixKeys() []string {
	return slices.Sorted(maps.Keys(s.Matrix))
}

// Sessions expands the spec into its sessions, sorted by key in natural order (runs
// of digits compare as numbers, so ".r2" comes before ".r10"). For each job, that is
// the cross product of its matrix values times its repeat count. A spec from Parse
// always expands; a spec built or changed in Go may not, and the problems are returned
// as a *SpecError.
// Sessions and Digest do not change s; they may run concurrently.
func (s *Spec) Sessions() ([]Session, error) {
	sessions, ps := s.expand(nil)
	s.checkKeys(sessions, ps)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return sessions, nil
}

// Digest returns the hex SHA-256 of the canonical form of the expanded sessions, the
// same for the same sessions in every run. It is "" when the spec does not expand.
func (s *Spec) Digest() string {
	sessions, err := s.Sessions()
	if err != nil {
		return ""
	}
	return DigestOf(sessions)
}

// DigestOf is Spec.Digest for sessions already expanded (by Sessions), without
// expanding the spec again.
func DigestOf(sessions []Session) string {
	h := sha256.New()
	h.Write([]byte("agentrun.jobs.spec/v1\n"))
	for _, se := range sessions {
		_, _ = fmt.Fprintf(h, "%s %s\n", se.Key, se.Digest) // a hash.Hash never fails a write
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Spec) at(path string) position { return s.pos[path] }

// expand expands every job not in skip. The sessions come sorted by key.
func (s *Spec) expand(skip map[int]bool) ([]Session, *problems) {
	ps := &problems{file: s.file}
	x := &expansion{d: newDecoder(ps, nil, map[string]position{}), ps: ps}
	var out []Session
	for i := range s.Jobs {
		if !skip[i] {
			out = append(out, s.expandJob(i, x)...)
		}
	}
	slices.SortStableFunc(out, func(a, b Session) int { return naturalCompare(a.Key, b.Key) })
	return out, ps
}

// expansion is the state of one expand: where problems go, and what the sessions so
// far have used of the limits.
type expansion struct {
	d        *decoder
	ps       *problems
	sessions int // sessions so far
	bytes    int // rendered prompt and system bytes so far
}

// expandJob returns the sessions of job i.
func (s *Spec) expandJob(i int, x *expansion) []Session {
	d, ps := x.d, x.ps
	job := &s.Jobs[i]
	jp := fmt.Sprintf("jobs[%d]", i)
	names := slices.Sorted(maps.Keys(job.Matrix))
	overrides := make([][]*Settings, len(names))
	good := true
	count := min(max(job.Repeat, 1), MaxSessions+1) // kept small, so it cannot overflow
	if job.Repeat < 0 {
		ps.add(s.at(jp+".repeat"), jp+".repeat", "must be at least 1, got %d", job.Repeat)
		good = false
	}
	for k, name := range names {
		vals := job.Matrix[name]
		mp := jp + ".matrix." + name
		if len(vals) == 0 {
			ps.add(s.at(mp), mp, "must not be empty")
			good = false
			continue
		}
		count = min(count*len(vals), MaxSessions+1)
		chain, err := matrixSetting(name)
		if err != nil {
			ps.add(s.at(mp), mp, "%v", err)
			good = false
			continue
		}
		if chain == nil {
			continue
		}
		overrides[k] = make([]*Settings, len(vals))
		for j, val := range vals {
			st := new(Settings)
			if msg := override(d, st, chain, val); msg != "" {
				vp := fmt.Sprintf("%s[%d]", mp, j)
				ps.add(s.at(vp), vp, "%s", shown(msg, val, val, false))
				good = false
			}
			overrides[k][j] = st
		}
	}
	if x.sessions+count > MaxSessions {
		ps.add(s.at(jp), jp, "expands to too many sessions: a spec may have at most %d", MaxSessions)
		return nil
	}
	prompt, system, ok := s.templates(i, ps)
	if !good || !ok {
		return nil
	}
	base := merge(s.Defaults, job.Settings)
	idx := make([]int, len(names))
	var out []Session
	for {
		st := base
		matrix := make(map[string]string, len(names))
		for k, name := range names {
			matrix[name] = job.Matrix[name][idx[k]]
			if overrides[k] != nil {
				st = merge(st, *overrides[k][idx[k]])
			}
		}
		for r := 1; r <= max(job.Repeat, 1); r++ {
			se, ok := s.session(i, st, names, matrix, r, prompt, system, ps)
			if !ok {
				return nil
			}
			if x.bytes += len(se.Prompt) + len(se.System); x.bytes > MaxRenderedBytes {
				ps.add(s.at(jp), jp, "the rendered prompts of the spec's sessions pass %d bytes", MaxRenderedBytes)
				return nil
			}
			out = append(out, se)
		}
		if !next(idx, names, job.Matrix) {
			x.sessions += len(out)
			return out
		}
	}
}

// next advances idx, an odometer over the matrix values with the last name turning
// fastest, and reports false when it wraps around.
func next(idx []int, names []string, matrix map[string][]string) bool {
	for k := len(idx) - 1; k >= 0; k-- {
		idx[k]++
		if idx[k] < len(matrix[names[k]]) {
			return true
		}
		idx[k] = 0
	}
	return false
}

// templates compiles the prompt and system templates of job i.
func (s *Spec) templates(i int, ps *problems) (prompt, system *template.Template, ok bool) {
	job := &s.Jobs[i]
	jp := fmt.Sprintf("jobs[%d]", i)
	src, name, path := job.Prompt, "prompt", jp+".prompt"
	switch {
	case job.Prompt != "":
	case job.PromptFile != "" && job.filePrompt != "":
		src, name, path = job.filePrompt, job.PromptFile, jp+".prompt_file"
	case job.PromptFile != "":
		ps.add(s.at(jp+".prompt_file"), jp+".prompt_file", "prompt file was not read: build specs with Parse or Load")
		return nil, nil, false
	default:
		ps.add(s.at(jp), jp, "missing prompt: set prompt or prompt_file")
		return nil, nil, false
	}
	prompt, err := compileTemplate(name, src)
	if err != nil {
		ps.add(s.at(path), path, "%v", err)
		return nil, nil, false
	}
	system, err = compileTemplate("system", job.System)
	if err != nil {
		ps.add(s.at(jp+".system"), jp+".system", "%v", err)
		return nil, nil, false
	}
	return prompt, system, true
}

// session builds one session of job i.
func (s *Spec) session(i int, st Settings, names []string, matrix map[string]string, r int,

	prompt, system *template.Template, ps *problems,
) (Session, bool) {
	job := &s.Jobs[i]
	jp := fmt.Sprintf("jobs[%d]", i)
	repeats := max(job.Repeat, 1)
	key := sessionKey(job.ID, names, matrix, r, repeats)
	if len(key) > MaxKeyBytes {
		ps.add(s.at(jp+".id"), jp+".id", "session key %q is longer than %d bytes: shorten the id, the matrix names or the values", key, MaxKeyBytes)
		return Session{}, false
	}
	data := map[string]any{"matrix": matrix, "repeat": r, "job": job.ID, "key": key}
	promptPath := jp + ".prompt"
	if job.Prompt == "" {
		promptPath = jp + ".prompt_file"
	}
	p, err := render(prompt, data)
	if err != nil {
		ps.add(s.at(promptPath), promptPath, "%v", err)
		return Session{}, false
	}
	sys, err := render(system, data)
	if err != nil {
		ps.add(s.at(jp+".system"), jp+".system", "%v", err)
		return Session{}, false
	}
	res := resolve(st, s.dir)
	if sb := res.Sandbox; sb.ScratchMiB > 0 && sb.MemoryMiB > 0 && sb.ScratchMiB > sb.MemoryMiB/2 {
		path := "defaults.sandbox.scratch_mib"
		if job.Sandbox != nil && job.Sandbox.ScratchMiB != nil {
			path = jp + ".sandbox.scratch_mib"
		}
		ps.add(s.at(path), path, "%d MiB is more than half of sandbox.memory_mib (%d): the scratch space counts in the memory limit, "+
			"and a full one would leave the session's processes no memory; give at most %d", sb.ScratchMiB, sb.MemoryMiB, sb.MemoryMiB/2)
		return Session{}, false
	}
	checks := make([]Check, len(job.Checks))
	for k, c := range job.Checks {
		if c.Timeout == 0 {
			c.Timeout = res.ToolTimeout
		}
		checks[k] = c
	}
	se := Session{
		Key: key, JobID: job.ID, Repeat: r, Repeats: repeats,
		Matrix: maps.Clone(matrix), Prompt: p, System: sys, Settings: res, Checks: checks,
		OutputSchema: slices.Clone(job.OutputSchema),
		job:          i, specDir: s.dir,
	}
	if se.Digest, err = se.digest(); err != nil {
		ps.add(s.at(jp), jp, "%v", err)
		return Session{}, false
	}
	return se, true
}

// digest hashes the canonical JSON of s without its digest and with its paths made
// relative to the spec directory, so that moving a checkout keeps digests.
func (s Session) digest() (string, error) {
	c := s
	c.Digest = ""
	c.Settings.Workspace.Dir = relTo(s.specDir, c.Settings.Workspace.Dir)
	c.Settings.Script = relTo(s.specDir, c.Settings.Script)
	c.Settings.Sandbox.Writable = relAll(s.specDir, c.Settings.Sandbox.Writable)
	c.Settings.Sandbox.Readable = relAll(s.specDir, c.Settings.Sandbox.Readable)
	c.Settings.Sandbox.Caches = relAll(s.specDir, c.Settings.Sandbox.Caches)
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("digest session %s: %w", s.Key, err)
	}
	h := sha256.New()
	h.Write([]byte("agentrun.jobs.session/v1\n"))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// relAll returns a copy of paths with each made relative to dir as by relTo.
func relAll(dir string, paths []string) []string {
	if paths == nil {
		return nil
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = relTo(dir, p)
	}
	return out
}

// relTo returns path relative to dir when the two share a directory below the root,
// and path itself otherwise: /opt/data stays /opt/data wherever the checkout is, while
// ../repo moves with it.
func relTo(dir, path string) string {
	if path == "" || dir == "" {
		return path
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return path
	}
	up := 0
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if part != ".." {
			break
		}
		up++
	}
	if depth := len(strings.Split(strings.Trim(filepath.ToSlash(filepath.Clean(dir)), "/"), "/")); up >= depth {
		return path
	}
	return filepath.ToSlash(rel)
}
