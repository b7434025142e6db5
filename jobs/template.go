package jobs

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
)

// compileTemplate parses a prompt or system template. Templates may not define
// templates of their own; a missing key is an error when rendering.
func compileTemplate(name, text string) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("invalid template: %s", strings.TrimPrefix(err.Error(), "template: "))
	}
	if len(t.Templates()) > 1 {
		return nil, fmt.Errorf("invalid template: %s: {{define}} and {{block}} are not supported", name)
	}
	return t, nil
}

var errTooLong = errors.New("rendered text too long")

// render executes t with data, failing when the output passes MaxPromptBytes.
func render(t *template.Template, data any) (string, error) {
	w := &cappedWriter{max: MaxPromptBytes}
	if err := t.Execute(w, data); err != nil {
		if errors.Is(err, errTooLong) {
			return "", fmt.Errorf("cannot render template: output passes %d bytes", MaxPromptBytes)
		}
		return "", fmt.Errorf("cannot render template: %s", strings.TrimPrefix(err.Error(), "template: "))
	}
	return w.b.String(), nil
}

type cappedWriter struct {
	b   strings.Builder
	max int
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.max {
		return 0, errTooLong
	}
	return w.b.Write(p)
}
