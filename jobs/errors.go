package jobs

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrTooLarge is returned by Load for a file larger than MaxSpecBytes.
var ErrTooLarge = errors.New("job spec too large")

// MaxProblems is the most problems a SpecError lists; one more entry counts the rest.
const MaxProblems = 100

// Problem is one thing wrong with a job spec.
type Problem struct {
	// File is the spec's path as given to Parse.
	File string
	// Line and Column are 1-based; 0 means unknown (both are unknown for specs built
	// in Go rather than parsed). For a YAML syntax error that the parser places only
	// on a line, Column is that line's first character.
	Line, Column int
	// Field is the path of the offending value, such as "jobs[2].timeout"; empty for
	// problems of the whole document.
	Field string
	// Message says what is wrong and, where it can, how to fix it.
	Message string
}

// String formats p as "file:line:col: field: message", leaving out the parts that are
// unknown.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		b.WriteString(":" + strconv.Itoa(p.Line))
		if p.Column > 0 {
			b.WriteString(":" + strconv.Itoa(p.Column))
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// SpecError lists every problem found in a job spec, in document order.
type SpecError struct {
	Errors []Problem
}

// Error lists the problems one per line.
func (e *SpecError) Error() string {
	lines := make([]string, len(e.Errors))
	for i, p := range e.Errors {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// position is where a value starts in the spec file.
type position struct{ line, col int }

func (p position) String() string { return fmt.Sprintf("%d:%d", p.line, p.col) }

// problems collects the problems of one file.
type problems struct {
	file string
	list []Problem
}

func (ps *problems) add(at position, field, format string, args ...any) {
	ps.list = append(ps.list, Problem{
		File: ps.file, Line: at.line, Column: at.col, Field: field,
		Message: fmt.Sprintf(format, args...),
	})
}

// err returns nil when there are no problems, else a *SpecError with the problems in
// document order (problems without a position last) and exact duplicates removed.
func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	list := slices.Clone(ps.list)
	slices.SortStableFunc(list, func(a, b Problem) int {
		if (a.Line == 0) != (b.Line == 0) {
			if a.Line == 0 {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	list = slices.Compact(list)
	if n := len(list) - MaxProblems; n > 0 {
		list = append(list[:MaxProblems], Problem{File: ps.file, Message: fmt.Sprintf("and %d more problems", n)})
	}
	return &SpecError{Errors: list}
}
