package jobs_test

import (
	"errors"
	"fmt"

	"github.com/agentrun/agentrun/jobs"
)

func ExampleParse() {
	spec := []byte(`version: 1
defaults: {model: claude-sonnet-4-6, timeout: 20m}
jobs:
  - id: fix-vet
    prompt: Run go vet with {{ .matrix.model }} and fix what it reports (try {{ .repeat }}).
    repeat: 2
    matrix: {model: [claude-sonnet-4-6, gpt-5.4]}
`)
	s, err := jobs.Parse("jobs.yaml", spec, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	sessions, err := s.Sessions()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, se := range sessions {
		fmt.Printf("%s: %s (%s)\n", se.Key, se.Prompt, se.Settings.Timeout)
	}
	// Output:
	// fix-vet+model=claude-sonnet-4-6.r1: Run go vet with claude-sonnet-4-6 and fix what it reports (try 1). (20m0s)
	// fix-vet+model=claude-sonnet-4-6.r2: Run go vet with claude-sonnet-4-6 and fix what it reports (try 2). (20m0s)
	// fix-vet+model=gpt-5.4.r1: Run go vet with gpt-5.4 and fix what it reports (try 1). (20m0s)
	// fix-vet+model=gpt-5.4.r2: Run go vet with gpt-5.4 and fix what it reports (try 2). (20m0s)
}

func ExampleSpecError() {
	spec := []byte(`version: 1
jobs:
  - id: a
    prompt: hi
    timeout: 30
    tools: [Read, Bsh]
`)
	_, err := jobs.Parse("jobs.yaml", spec, nil)
	var se *jobs.SpecError
	if errors.As(err, &se) {
		for _, p := range se.Errors {
			fmt.Printf("%d:%d %s\n", p.Line, p.Column, p.Field)
		}
		fmt.Println(err)
	}
	// Output:
	// 5:14 jobs[0].timeout
	// 6:19 jobs[0].tools[1]
	// jobs.yaml:5:14: jobs[0].timeout: 30 has no unit: add one, such as "30s" or "30m"
	// jobs.yaml:6:19: jobs[0].tools[1]: unknown tool "Bsh" (did you mean "Bash"?); want one of Read, Write, Edit, Bash, Glob, Grep, TodoWrite, Task
}
