package protocol

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Provenance says what produced a session: the fields an evaluator groups and compares
// results by. session_start and the result carry the same members.
type Provenance struct {
	// Provider and Model are the resolved provider ("anthropic", "openai", "scripted",
	// ...) and the model it was asked for.
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Matrix holds the session's matrix values by name; empty without a matrix.
	Matrix map[string]string `json:"matrix,omitempty"`
	// Repeat is the 1-based index among the job's repeats, Attempt the 1-based
	// whole-session attempt; both are 0 when unknown (a session outside a run).
	Repeat  int `json:"repeat,omitempty"`
	Attempt int `json:"attempt,omitempty"`
	// Version is the agentrun build that ran the session.
	Version string `json:"agentrun_version,omitempty"`
}

// The RESP extension names of the members beyond provider and model.
const (
	extMatrix  = "matrix:" // then the value's name
	extRepeat  = "repeat"
	extAttempt = "attempt"
	extVersion = "agentrun_version"
	extProv    = "provider"
	extModel   = "model"
)

// appendProvenance writes provider and model, always, then the other members, each
// only when set; matrix names come in sorted order.
func appendProvenance(o *jsonObject, p Provenance) {
	o.str("provider", p.Provider)
	o.str("model", p.Model)
	if len(p.Matrix) > 0 {
		o.key("matrix")
		mo := jsonObject{buf: append(o.buf, '{'), first: true}
		for _, k := range slices.Sorted(maps.Keys(p.Matrix)) {
			mo.anyKey(k)
			mo.buf = AppendJSONString(mo.buf, p.Matrix[k])
		}
		o.buf = append(mo.buf, '}')
	}
	if p.Repeat != 0 {
		o.int("repeat", int64(p.Repeat))
	}
	if p.Attempt != 0 {
		o.int("attempt", int64(p.Attempt))
	}
	o.strOpt("agentrun_version", p.Version)
}

// addProvenanceExt adds the members beyond provider and model as trailing pairs; with
// provider and model too when all is set (a result, whose fixed fields predate them).
func addProvenanceExt(f *frame, p Provenance, all bool) {
	if all {
		f.ext(extProv, p.Provider)
		f.ext(extModel, p.Model)
	}
	for _, k := range slices.Sorted(maps.Keys(p.Matrix)) {
		// One pair per value, so that names and values keep their bytes exactly.
		f.fields = append(f.fields, extMatrix+k, p.Matrix[k])
	}
	if p.Repeat != 0 {
		f.ext(extRepeat, strconv.Itoa(p.Repeat))
	}
	if p.Attempt != 0 {
		f.ext(extAttempt, strconv.Itoa(p.Attempt))
	}
	f.ext(extVersion, p.Version)
}

// setProvenance applies one trailing pair to p; it reports whether name was one of its.
func setProvenance(p *Provenance, name, value string) (bool, error) {
	switch name {
	case extProv:
		p.Provider = value
	case extModel:
		p.Model = value
	case extVersion:
		p.Version = value
	case extRepeat, extAttempt:
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return true, fmt.Errorf("%w: %s is not a count", ErrMalformed, name)
		}
		if name == extRepeat {
			p.Repeat = n
		} else {
			p.Attempt = n
		}
	default:
		k, ok := strings.CutPrefix(name, extMatrix)
		if !ok {
			return false, nil
		}
		if p.Matrix == nil {
			p.Matrix = map[string]string{}
		}
		p.Matrix[k] = value
	}
	return true, nil
}
