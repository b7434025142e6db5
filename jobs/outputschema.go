package jobs

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// outputSchemaURL names an output schema inside the compiler; it never leaves memory.
const outputSchemaURL = "mem:///output_schema.json"

// errExternalRef is what the compiler's loader says to every external $ref.
var errExternalRef = errors.New("external references are not allowed in output_schema; put definitions under $defs")

// CompileOutputSchema compiles a session's OutputSchema (draft 2020-12 unless it names
// another draft in $schema). References outside the schema itself are refused, so
// compiling never reads a file or the network.
func CompileOutputSchema(schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("invalid output_schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(outputSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("invalid output_schema: %w", err)
	}
	sch, err := c.Compile(outputSchemaURL)
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), outputSchemaURL, "")
		msg = metaschemaNoise.ReplaceAllString(msg, "")
		msg = strings.Join(strings.Fields(msg), " ")
		return nil, fmt.Errorf("invalid output_schema: %s", msg)
	}
	return sch, nil
}

// metaschemaNoise is the part of a compile error that names the metaschema and its
// top-level allOf, which says nothing about the user's mistake.
var metaschemaNoise = regexp.MustCompile(`jsonschema validation failed with '[^']*' - at '': 'allOf' failed - `)

// refuseLoader is a jsonschema.URLLoader that loads nothing.
type refuseLoader struct{}

func (refuseLoader) Load(string) (any, error) { return nil, errExternalRef }
