package runner

import (
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/agentrun/agentrun/jobs"
)

// jobLines maps each job id of spec to the line of its entry in the spec file (the
// line of its "- " item), for JUnit's testcase line and GitHub's annotations. A job
// it cannot place is missing; reading the file again never fails a run.
func jobLines(spec *jobs.Spec) map[string]int {
	lines := map[string]int{}
	if spec == nil || spec.File() == "" {
		return lines
	}
	b, err := os.ReadFile(spec.File())
	if err != nil {
		return lines
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return lines
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "jobs" || root.Content[i+1].Kind != yaml.SequenceNode {
			continue
		}
		for _, item := range root.Content[i+1].Content {
			if item.Kind != yaml.MappingNode {
				continue
			}
			for j := 0; j+1 < len(item.Content); j += 2 {
				if item.Content[j].Value == "id" {
					lines[item.Content[j+1].Value] = item.Line
				}
			}
		}
	}
	return lines
}
