package jobs

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
)

// merge returns base with every field that over sets replaced, field by field: nested
// settings (budget, sandbox, network, workspace, thinking) merge per field too, env
// merges per variable, secrets are joined, and every other list (sandbox paths and the
// network allow list among them) is replaced as a whole. Neither argument is changed.
func merge(base, over Settings) Settings {
	out := base
	mergeStruct(reflect.ValueOf(&out).Elem(), reflect.ValueOf(over))
	return out
}

func mergeStruct(dst, src reflect.Value) {
	for i := range dst.NumField() {
		d, s := dst.Field(i), src.Field(i)
		if s.IsNil() {
			continue
		}
		switch {
		case s.Kind() == reflect.Pointer && s.Elem().Kind() == reflect.Struct:
			n := reflect.New(s.Type().Elem())
			if !d.IsNil() {
				n.Elem().Set(d.Elem())
			}
			mergeStruct(n.Elem(), s.Elem())
			d.Set(n)
		case s.Kind() == reflect.Map:
			n := reflect.MakeMap(s.Type())
			for _, m := range []reflect.Value{d, s} {
				for it := m.MapRange(); it.Next(); {
					n.SetMapIndex(it.Key(), it.Value())
				}
			}
			d.Set(n)
		case s.Kind() == reflect.Slice && dst.Type().Field(i).Name == "Secrets":
			d.Set(reflect.AppendSlice(reflect.MakeSlice(s.Type(), 0, d.Len()+s.Len()), d))
			d.Set(reflect.AppendSlice(d, s))
		default:
			d.Set(s)
		}
	}
}

// resolve fills the settings that st leaves absent with the built-in defaults and
// makes relative paths absolute against dir.
func resolve(st Settings, dir string) Resolved {
	r := Resolved{
		MaxTurns:    DefaultMaxTurns,
		MaxTokens:   DefaultMaxTokens,
		Timeout:     DefaultTimeout,
		IdleTimeout: DefaultIdleTimeout,
		ToolTimeout: DefaultToolTimeout,
		Tools:       AllTools(),
		BashMode:    DefaultBashMode,
		Workspace:   Workspace{Dir: ".", Mode: WorkspaceCopy},
		Env:         map[string]string{},
		Secrets:     []string{},
		Skills:      []string{},
	}
	set(&r.Provider, st.Provider)
	set(&r.Model, st.Model)
	set(&r.BaseURL, st.BaseURL)
	set(&r.MaxTurns, st.MaxTurns)
	set(&r.MaxTokens, st.MaxTokens)
	set(&r.Timeout, st.Timeout)
	set(&r.IdleTimeout, st.IdleTimeout)
	set(&r.ToolTimeout, st.ToolTimeout)
	if st.Tools != nil {
		r.Tools = slices.Clone(st.Tools)
	}
	set(&r.BashMode, st.BashMode)
	if sb := st.Sandbox; sb != nil {
		set(&r.Sandbox.Level, sb.Level)
		r.Sandbox.Writable = resolvePaths(dir, sb.Writable)
		r.Sandbox.Readable = resolvePaths(dir, sb.Readable)
		r.Sandbox.Caches = resolvePaths(dir, sb.Caches)
		set(&r.Sandbox.ScratchMiB, sb.ScratchMiB)
		set(&r.Sandbox.MemoryMiB, sb.MemoryMiB)
	}
	if n := st.Network; n != nil {
		r.Network.Allow = resolveHosts(n.Allow)
	}
	if b := st.Budget; b != nil {
		set(&r.Budget.MaxCostUSD, b.MaxCostUSD)
		set(&r.Budget.MaxTokens, b.MaxTokens)
	}
	if l := st.Limits; l != nil {
		set(&r.Limits.MaxResponseBytes, l.MaxResponseBytes)
		set(&r.Limits.MaxToolInputBytes, l.MaxToolInputBytes)
	}
	set(&r.Retries, st.Retries)
	if w := st.Workspace; w != nil {
		set(&r.Workspace.Dir, w.Dir)
		set(&r.Workspace.Mode, w.Mode)
	}
	r.Workspace.Dir = under(dir, r.Workspace.Dir)
	if st.Env != nil {
		r.Env = maps.Clone(st.Env)
	}
	if st.Secrets != nil {
		r.Secrets = slices.Compact(slices.Sorted(slices.Values(st.Secrets)))
	}
	if t := st.Thinking; t != nil {
		set(&r.Thinking.Mode, t.Mode)
		set(&r.Thinking.Budget, t.Budget)
		set(&r.Thinking.Effort, t.Effort)
	}
	set(&r.MaxContext, st.MaxContext)
	if st.Skills != nil {
		r.Skills = slices.Clone(st.Skills)
	}
	if st.Script != nil {
		r.Script = under(dir, *st.Script)
	}
	r.MCPServers = resolveMCP(st.MCPServers)
	if c := st.Cache; c != nil && c.Prime != nil {
		r.Cache.NoPrime = !*c.Prime
	}
	return r
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// under resolves path against dir unless it is absolute.
func under(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}

// validMatrixName reports whether name can name a matrix dimension: an identifier, or
// two joined by a dot for a nested setting such as thinking.effort.
func validMatrixName(name string) bool {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if !validVarName(p) {
			return false
		}
	}
	return true
}

// matrixSetting returns the chain of Settings fields that the matrix name overrides,
// nil when the name is a plain template variable, or an error when the name is a key
// a matrix cannot override.
func matrixSetting(name string) ([]field, error) {
	first, rest, nested := strings.Cut(name, ".")
	fs := fieldsOf(settingsType)
	i := indexOf(fs, first)
	if i < 0 {
		switch {
		case indexOf(fieldsOf(jobType), first) >= 0:
			return nil, fmt.Errorf("matrix name %q is a job key; pick another name and use {{ .matrix.%s }} where you need it", name, first)
		case nested:
			return nil, fmt.Errorf("matrix name %q: %q is not a setting (only nested settings such as thinking.effort may contain a dot)", name, first)
		}
		return nil, nil
	}
	f := fs[i]
	t := settingsType.Field(f.index[0]).Type
	if !nested {
		if !isScalar(t) {
			return nil, fmt.Errorf("matrix name %q is a setting that takes %s; a matrix can only override single-value settings", name, kindOf(t))
		}
		return []field{f}, nil
	}
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("matrix name %q: setting %q has no nested keys", name, first)
	}
	inner := fieldsOf(t.Elem())
	j := indexOf(inner, rest)
	if j < 0 {
		names := make([]string, len(inner))
		for k, g := range inner {
			names[k] = first + "." + g.name
		}
		return nil, fmt.Errorf("matrix name %q: %s has no key %q; want one of %s", name, first, rest, strings.Join(names, ", "))
	}
	if it := t.Elem().FieldByIndex(inner[j].index).Type; !isScalar(it) {
		return nil, fmt.Errorf("matrix name %q is a setting that takes %s; a matrix can only override single-value settings", name, kindOf(it))
	}
	return []field{f, inner[j]}, nil
}

// isScalar reports whether t, a Settings field type, holds a single value.
func isScalar(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Map:
		return false
	default:
		return true
	}
}

func kindOf(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	default:
		return "a value"
	}
}

// override sets the setting that chain names in st from the matrix value val. It
// returns why val does not fit (a message that may hold valueMark), or "".
func override(d *decoder, st *Settings, chain []field, val string) string {
	v := reflect.ValueOf(st).Elem()
	for _, f := range chain[:len(chain)-1] {
		fv := v.FieldByIndex(f.index)
		if fv.IsNil() {
			fv.Set(reflect.New(fv.Type().Elem()))
		}
		v = fv.Elem()
	}
	last := chain[len(chain)-1]
	return d.setText(v.FieldByIndex(last.index), val, last.opts)
}
