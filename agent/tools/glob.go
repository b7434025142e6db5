package tools

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentrun/agentrun/pathname"
	"github.com/agentrun/agentrun/policy"
	"github.com/agentrun/agentrun/protocol"
)

// MaxGlobResults caps the paths one Glob call returns.
const MaxGlobResults = 1000

// Glob is the Glob tool: it finds files by name pattern.
type Glob struct{}

type globInput struct {
	Pattern *string `json:"pattern"`
	Path    string  `json:"path"`
}

// Spec describes Glob.
func (Glob) Spec() protocol.ToolSpec {
	return protocol.ToolSpec{
		Name: "Glob",
		Description: "Find files by name pattern. ** matches any number of directories, * any run of characters " +
			"within a name, ? one character, [abc] a class and {a,b} alternatives. A pattern without '/' matches " +
			"file names at any depth; a pattern with '/' matches paths relative to the search directory " +
			"(e.g. src/**/*.go). .git and files ignored by .gitignore are skipped. Results are sorted by " +
			"modification time, newest first, and capped at 1000.",
		InputSchema: schema(`"pattern":{"type":"string","description":"Glob pattern such as **/*.go"},`+
			`"path":{"type":"string","description":"Directory to search (default: the workspace)"}`, "pattern"),
	}
}

type globHit struct {
	path  string
	mtime time.Time
}

// Run lists the matching files.
func (Glob) Run(ctx context.Context, call Call) Result {
	env := call.Env
	var in globInput
	if err := decodeInput(call.Input, &in); err != nil {
		return failure(err.Error())
	}
	if in.Pattern == nil || *in.Pattern == "" {
		return failure("no pattern provided")
	}
	pattern := *in.Pattern
	if in.Path != "" {
		if err := env.policy().CheckPath(policy.OpRead, in.Path, env.dirs()); err != nil {
			return failure(err.Error())
		}
		fi, err := os.Stat(absPath(env, in.Path))
		switch {
		case err != nil:
			return failure("directory not found: " + in.Path)
		case !fi.IsDir():
			return failure("not a directory: " + in.Path)
		}
	}
	rootArg, rest, anchored := splitGlob(filepath.ToSlash(pattern))
	if !strings.HasPrefix(rootArg, "/") && !strings.HasPrefix(rootArg, "~") {
		rootArg = filepath.Join(in.Path, rootArg)
	}
	if pathname.HasDotDot(rest) {
		return failure("the pattern may use '..' only before its first wildcard")
	}
	if err := env.policy().CheckPath(policy.OpRead, rootArg, env.dirs()); err != nil {
		return failure(err.Error())
	}
	if !anchored {
		rest = "**/" + rest
	}
	g, err := pathname.Compile(rest)
	if err != nil {
		return failure(fmt.Sprintf("invalid pattern %q: %v", pattern, err))
	}
	root := absPath(env, rootArg)
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return Result{Content: "No files found"}
	}
	var hits []globHit
	_, err = walkFiles(ctx, env, root, func(p string, d fs.DirEntry) error {
		rel, err := filepath.Rel(root, p)
		if err != nil || !g.Match(filepath.ToSlash(rel)) {
			return nil
		}
		h := globHit{path: displayPath(env, p)}
		if fi, err := d.Info(); err == nil {
			h.mtime = fi.ModTime()
		}
		hits = append(hits, h)
		return nil
	})
	if err != nil {
		return failure(fmt.Sprintf("glob %s: %v", pattern, err))
	}
	return Result{Content: renderGlob(hits, env.maxOutput())}
}

// splitGlob splits a pattern into the literal directory before its first wildcard
// (where the walk starts) and the rest, and says whether the rest is anchored there
// (the pattern had a '/') or matches names at any depth.
func splitGlob(p string) (root, rest string, anchored bool) {
	p = strings.TrimPrefix(p, "./")
	anchored = strings.Contains(p, "/")
	i := strings.IndexAny(p, "*?[{")
	if i < 0 {
		i = len(p)
	}
	j := strings.LastIndexByte(p[:i], '/')
	if j < 0 {
		return "", p, anchored
	}
	root, rest = p[:j], p[j+1:]
	if root == "" {
		root = "/"
	}
	return root, rest, anchored
}

// renderGlob sorts the hits newest first (then by path) and renders them one per
// line within maxOut bytes and MaxGlobResults lines.
func renderGlob(hits []globHit, maxOut int) string {
	if len(hits) == 0 {
		return "No files found"
	}
	slices.SortFunc(hits, func(a, b globHit) int {
		if c := b.mtime.Compare(a.mtime); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	var b strings.Builder
	shown := 0
	for _, h := range hits {
		if shown == MaxGlobResults || b.Len()+len(h.path)+1 > maxOut-noteReserve {
			break
		}
		b.WriteString(h.path)
		b.WriteByte('\n')
		shown++
	}
	if shown < len(hits) {
		fmt.Fprintf(&b, "[... %d more files not shown (%d in all); use a narrower pattern or path ...]\n", len(hits)-shown, len(hits))
	}
	return b.String()
}
