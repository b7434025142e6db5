package tools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentrun/agentrun/pathname"
	"github.com/agentrun/agentrun/policy"
	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/textcut"
)

const (
	// maxGrepContext caps the context lines around a match.
	maxGrepContext = 20
	// maxGrepLine caps the bytes of one line shown in Grep output.
	maxGrepLine = 2000
	// maxGrepScanLine caps the bytes of one line that are searched.
	maxGrepScanLine = 1 << 20
)

// Grep is the Grep tool: it searches file contents with a Go regular expression.
type Grep struct{}

type grepInput struct {
	Pattern         *string `json:"pattern"`
	Path            string  `json:"path"`
	Glob            string  `json:"glob"`
	Context         number  `json:"context"`
	CaseInsensitive flag    `json:"case_insensitive"`
	OutputMode      string  `json:"output_mode"`
}

// Spec describes Grep.
func (Grep) Spec() protocol.ToolSpec {
	return protocol.ToolSpec{
		Name: "Grep",
		Description: "Search file contents with a regular expression (Go RE2 syntax). output_mode \"content\" " +
			"(default) prints path:line:text, with context lines as path-line-text and -- between groups; " +
			"\"files_with_matches\" prints the matching files; \"count\" prints path:count. glob filters files by " +
			"name (e.g. *.go). Binary files, .git and files ignored by .gitignore are skipped. Output is capped.",
		InputSchema: schema(`"pattern":{"type":"string","description":"Regular expression to search for"},`+
			`"path":{"type":"string","description":"File or directory to search (default: the workspace)"},`+
			`"glob":{"type":"string","description":"Only search files whose name matches this glob"},`+
			`"context":{"type":"integer","minimum":0,"maximum":20,"description":"Lines of context before and after each match"},`+
			`"case_insensitive":{"type":"boolean","description":"Ignore case"},`+
			`"output_mode":{"type":"string","enum":["content","files_with_matches","count"],"description":"What to print (default content)"}`,
			"pattern"),
	}
}

// grepSearch is the state of one Grep call.
type grepSearch struct {
	env       *Env
	re        *regexp.Regexp
	mode      string
	context   int
	budget    int
	out       strings.Builder
	files     int
	matches   int
	capped    bool
	skipLinks int
	binary    int
	groups    int
	single    bool // the path is one file
	br        *bufio.Reader
	lr        *lineReader
}

// Run searches.
func (Grep) Run(ctx context.Context, call Call) Result {
	env := call.Env
	var in grepInput
	if err := decodeInput(call.Input, &in); err != nil {
		return failure(err.Error())
	}
	if in.Pattern == nil || *in.Pattern == "" {
		return failure("no pattern provided")
	}
	expr := *in.Pattern
	if in.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return failure(fmt.Sprintf("invalid regular expression: %v", err))
	}
	s := &grepSearch{env: env, re: re, mode: in.OutputMode, budget: max(env.maxOutput()-noteReserve, minTruncate)}
	switch s.mode {
	case "":
		s.mode = "content"
	case "content", "files_with_matches", "count":
	default:
		return failure(fmt.Sprintf("output_mode %q: want content, files_with_matches or count", in.OutputMode))
	}
	if in.Context.set && (in.Context.n < 0 || in.Context.n > maxGrepContext) {
		return failure(fmt.Sprintf("context must be between 0 and %d lines", maxGrepContext))
	}
	s.context = int(in.Context.n)
	var glob *pathname.Pattern
	if in.Glob != "" {
		g := strings.TrimPrefix(filepath.ToSlash(in.Glob), "./")
		if !strings.Contains(g, "/") {
			g = "**/" + g
		}
		if glob, err = pathname.Compile(g); err != nil {
			return failure(fmt.Sprintf("invalid glob %q: %v", in.Glob, err))
		}
	}
	if err := env.policy().CheckPath(policy.OpRead, in.Path, env.dirs()); err != nil {
		return failure(err.Error())
	}
	root := absPath(env, in.Path)
	fi, err := os.Stat(root)
	if err != nil {
		return failure("path not found: " + displayOr(in.Path, "."))
	}
	if !fi.IsDir() {
		s.single = true
		if err := s.file(ctx, root); err != nil && !errors.Is(err, errGrepCapped) {
			return failure(fileError(in.Path, err))
		}
	} else {
		s.skipLinks, err = walkFiles(ctx, env, root, func(p string, d fs.DirEntry) error {
			if glob != nil {
				rel, err := filepath.Rel(root, p)
				if err != nil || !glob.Match(filepath.ToSlash(rel)) {
					return nil
				}
			}
			if err := s.file(ctx, p); err != nil {
				if errors.Is(err, errGrepCapped) {
					return fs.SkipAll
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
			return nil
		})
		if err != nil {
			return failure(fmt.Sprintf("grep: %v", err))
		}
	}
	return Result{Content: s.render()}
}

func displayOr(p, def string) string {
	if p == "" {
		return def
	}
	return p
}

// errGrepCapped stops the walk once the output is full.
var errGrepCapped = errors.New("grep output capped")

// file searches one file. Binary files, directories and special files are skipped
// silently (nil error) when reached by the walk.
func (s *grepSearch) file(ctx context.Context, p string) error {
	f, _, err := openFile(s.env, p, os.O_RDONLY, policy.OpRead)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if s.br == nil {
		s.br = bufio.NewReaderSize(f, 64<<10)
		s.lr = newLineReader(s.br, maxGrepScanLine)
	}
	br, lr := s.br, s.lr
	br.Reset(f)
	lr.reset()
	if head, _ := br.Peek(sniffLen); isBinary(head) {
		s.binary++
		return nil
	}
	name := displayPath(s.env, p)
	type held struct {
		n    int
		text string
	}
	var before []held
	after, lastShown, n, count := 0, 0, 0, 0
	for lr.next() {
		n++
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if s.re.Match(lr.line) {
			count++
			s.matches++
			if s.mode != "content" {
				if s.mode == "files_with_matches" {
					break
				}
				continue
			}
			first := n - len(before)
			if s.context > 0 && s.groups > 0 && (lastShown == 0 || first > lastShown+1) {
				s.emit("--\n")
			}
			for _, h := range before {
				s.emit(fmt.Sprintf("%s-%d-%s\n", name, h.n, h.text))
			}
			before = before[:0]
			s.emit(fmt.Sprintf("%s:%d:%s\n", name, n, clipLine(lr.line)))
			if lastShown == 0 || first > lastShown+1 {
				s.groups++
			}
			lastShown, after = n, s.context
		} else if after > 0 {
			s.emit(fmt.Sprintf("%s-%d-%s\n", name, n, clipLine(lr.line)))
			lastShown = n
			after--
		} else if s.context > 0 {
			before = append(before, held{n, clipLine(lr.line)})
			if len(before) > s.context {
				before = before[1:]
			}
		}
		if s.capped {
			break
		}
	}
	if err := lr.Err(); err != nil {
		return err
	}
	if count > 0 {
		s.files++
		switch s.mode {
		case "files_with_matches":
			s.emit(name + "\n")
		case "count":
			s.emit(fmt.Sprintf("%s:%d\n", name, count))
		}
	}
	if s.capped {
		return errGrepCapped
	}
	return nil
}

// emit appends output while it fits, and marks the search capped when it does not.
func (s *grepSearch) emit(line string) {
	if s.capped {
		return
	}
	if s.out.Len()+len(line) > s.budget {
		s.capped = true
		return
	}
	s.out.WriteString(line)
}

// clipLine renders a line for output: valid UTF-8, at most maxGrepLine bytes.
func clipLine(b []byte) string {
	if len(b) <= maxGrepLine {
		return sanitize(b)
	}
	return sanitize([]byte(textcut.Head(string(b), maxGrepLine))) + " [... line cut ...]"
}

// render returns the output with its notes.
func (s *grepSearch) render() string {
	var b strings.Builder
	b.WriteString(s.out.String())
	if s.matches == 0 {
		b.WriteString("No matches found\n")
	}
	if s.single && s.binary > 0 {
		b.WriteString("[... the file is binary; Grep searches text files only ...]\n")
	}
	if s.capped {
		fmt.Fprintf(&b, "[... output capped at %d bytes; narrow the search with path, glob or a more specific pattern ...]\n", s.budget)
	}
	if s.skipLinks > 0 {
		fmt.Fprintf(&b, "[... skipped %d symbolic links that the bash_mode policy does not allow reading ...]\n", s.skipLinks)
	}
	return b.String()
}
