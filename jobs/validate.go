package jobs

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// validator checks what decoding cannot: rules across fields and files the spec
// points to. It marks the jobs with problems so that expansion skips them.
type validator struct {
	s           *Spec
	ps          *problems
	d           *decoder
	bad         map[int]bool
	badDefaults bool
}

func (v *validator) validate() {
	s := v.s
	if at, set := s.pos["version"]; set && !v.hasProblem("version") && s.Version != Version {
		v.ps.add(at, "version", "unsupported version %d: this agentrun reads version %d", s.Version, Version)
	}
	v.settings(&s.Defaults, "defaults")
	v.prices()
	ids := map[string]int{}
	for i := range s.Jobs {
		v.job(i, ids)
	}
	v.badDefaults = v.hasProblem("defaults")
	for i := range s.Jobs {
		if v.hasProblem(fmt.Sprintf("jobs[%d]", i)) {
			v.bad[i] = true
		}
	}
}

// hasProblem reports whether a problem was found at path or inside it.
func (v *validator) hasProblem(path string) bool {
	for _, p := range v.ps.list {
		if rest, ok := strings.CutPrefix(p.Field, path); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			return true
		}
	}
	return false
}

func (v *validator) settings(st *Settings, path string) {
	s := v.s
	if st.Script != nil && *st.Script != "" {
		p := join(path, "script")
		if msg := regularFile(under(s.dir, *st.Script)); msg != "" {
			v.ps.add(s.at(p), p, "script %s", msg)
		}
	}
	if sb := st.Sandbox; sb != nil {
		canon := func(p string) string { return resolvePath(s.dir, p) }
		v.duplicates(join(path, "sandbox.writable"), "path", sb.Writable, canon)
		v.duplicates(join(path, "sandbox.readable"), "path", sb.Readable, canon)
		v.duplicates(join(path, "sandbox.caches"), "path", sb.Caches, canon)
	}
	if n := st.Network; n != nil {
		v.duplicates(join(path, "network.allow"), "host", n.Allow, strings.ToLower)
	}
	checkMCP(st.MCPServers, join(path, "mcp_servers"), s.at, v.ps, v.hasProblem)
	seen := map[Tool]int{}
	for i, t := range st.Tools {
		if t == "" {
			continue // an unknown tool, already reported as such
		}
		if j, dup := seen[t]; dup {
			p := fmt.Sprintf("%s.tools[%d]", path, i)
			v.ps.add(s.at(p), p, "duplicate tool %q (first at %s)", t, s.at(fmt.Sprintf("%s.tools[%d]", path, j)))
		} else {
			seen[t] = i
		}
	}
}

// prices gives a price override without cache prices the input price for them.
func (v *validator) prices() {
	for name, p := range v.s.Prices {
		if _, set := v.s.pos["prices."+name+".cache_read"]; !set {
			p.CacheRead = p.Input
		}
		if _, set := v.s.pos["prices."+name+".cache_write"]; !set {
			p.CacheWrite = p.Input
		}
		v.s.Prices[name] = p
	}
}

func (v *validator) job(i int, ids map[string]int) {
	s := v.s
	job := &s.Jobs[i]
	jp := fmt.Sprintf("jobs[%d]", i)
	if job.ID != "" && !v.hasProblem(jp+".id") {
		if j, dup := ids[job.ID]; dup {
			v.ps.add(s.at(jp+".id"), jp+".id", "duplicate job id %q (first at %s, jobs[%d])", job.ID, s.at(fmt.Sprintf("jobs[%d].id", j)), j)
		} else {
			ids[job.ID] = i
		}
	}
	v.prompt(i)
	if len(job.OutputSchema) > 0 {
		if _, err := CompileOutputSchema(job.OutputSchema); err != nil {
			v.ps.add(s.at(jp+".output_schema"), jp+".output_schema", "%v", err)
		}
	}
	names := map[string]int{}
	for k, c := range job.Checks {
		if c.Name == "" {
			continue
		}
		p := fmt.Sprintf("%s.checks[%d].name", jp, k)
		if j, dup := names[c.Name]; dup {
			v.ps.add(s.at(p), p, "duplicate check name %q (first at %s)", c.Name, s.at(fmt.Sprintf("%s.checks[%d].name", jp, j)))
		} else {
			names[c.Name] = k
		}
	}
	v.matrix(i)
	v.settings(&job.Settings, jp)
}

// matrix checks the matrix of job i: names that a matrix cannot use, values that do not
// fit the setting they override, and repeated values.
func (v *validator) matrix(i int) {
	s := v.s
	job := &s.Jobs[i]
	jp := fmt.Sprintf("jobs[%d]", i)
	prompt, system, compiled := s.templates(i, &problems{})
	use := matrixUseOf(prompt, system)
	for _, name := range slices.Sorted(maps.Keys(job.Matrix)) {
		mp := jp + ".matrix." + name
		chain, err := matrixSetting(name)
		if err != nil {
			v.ps.add(s.at(mp), mp, "%v", err)
		}
		if err == nil && chain == nil && compiled && !use.uses(name) {
			// A name that overrides nothing and that no template reads changes
			// nothing but the keys: most likely a misspelt setting ("modle").
			msg := fmt.Sprintf("matrix name %q is no setting and no template uses it", name)
			if sg := Suggest(name, matrixCandidates(use)); sg != "" {
				msg += fmt.Sprintf("; did you mean %q?", sg)
			} else {
				msg += fmt.Sprintf(": read it in the prompt or system as {{ .matrix.%s }}, or use repeat for independent sessions", name)
			}
			v.ps.add(s.at(mp), mp, "%s", msg)
		}
		first := map[string]int{}
		for k, val := range job.Matrix[name] {
			p := fmt.Sprintf("%s[%d]", mp, k)
			if _, set := s.pos[p]; !set {
				continue // reported by the decoder
			}
			if j, dup := first[val]; dup {
				v.ps.add(s.at(p), p, "duplicate matrix value %q (first at %s)", val, s.at(fmt.Sprintf("%s[%d]", mp, j)))
				continue
			}
			first[val] = k
			if chain != nil {
				if msg := override(v.d, new(Settings), chain, val); msg != "" {
					v.ps.add(s.at(p), p, "%s", shown(msg, val, val, false))
				}
			}
		}
	}
}

// prompt checks that job i has exactly one of prompt and prompt_file, reads the
// prompt file and compiles the templates.
func (v *validator) prompt(i int) {
	s := v.s
	job := &s.Jobs[i]
	jp := fmt.Sprintf("jobs[%d]", i)
	pp, fp := jp+".prompt", jp+".prompt_file"
	_, hasPrompt := s.pos[pp]
	_, hasFile := s.pos[fp]
	switch {
	case hasPrompt && hasFile:
		v.ps.add(s.at(fp), fp, "set either prompt (at %s) or prompt_file, not both", s.at(pp))
		return
	case !hasPrompt && !hasFile:
		v.ps.add(s.at(jp), jp, "missing prompt: set prompt or prompt_file")
		return
	case hasFile && job.PromptFile != "":
		text, msg := readPrompt(under(s.dir, job.PromptFile))
		if msg != "" {
			v.ps.add(s.at(fp), fp, "prompt file %s", msg)
			return
		}
		if strings.TrimSpace(text) == "" {
			v.ps.add(s.at(fp), fp, "prompt file %s is empty", job.PromptFile)
			return
		}
		job.filePrompt = text
		if _, err := compileTemplate(job.PromptFile, text); err != nil {
			v.ps.add(s.at(fp), fp, "%v", err)
		}
	case hasPrompt && job.Prompt != "":
		if _, err := compileTemplate("prompt", job.Prompt); err != nil {
			v.ps.add(s.at(pp), pp, "%v", err)
		}
	}
	if _, err := compileTemplate("system", job.System); err != nil {
		v.ps.add(s.at(jp+".system"), jp+".system", "%v", err)
	}
}

// regularFile returns "" when path names a regular file, else why it is unusable.
// It never opens anything else, so a FIFO or device cannot block or flood Parse.
func regularFile(path string) string {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Sprintf("%s: %v", path, unwrapPathError(err))
	case !fi.Mode().IsRegular():
		return fmt.Sprintf("%s is not a regular file", path)
	}
	return ""
}

// readPrompt reads a prompt file of at most MaxPromptBytes; on failure it returns a
// message.
func readPrompt(path string) (string, string) {
	if msg := regularFile(path); msg != "" {
		return "", msg
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Sprintf("%s: %v", path, unwrapPathError(err))
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, MaxPromptBytes+1))
	switch {
	case err != nil:
		return "", fmt.Sprintf("%s: %v", path, err)
	case len(b) > MaxPromptBytes:
		return "", fmt.Sprintf("%s is larger than %d bytes", path, MaxPromptBytes)
	}
	return string(b), ""
}

// unwrapPathError drops the operation and path of an *os.PathError, which the
// messages already name.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
