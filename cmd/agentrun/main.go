// Command agentrun runs LLM coding-agent sessions headless: many at once from a YAML job
// spec (run), or one from the command line (exec).
package main

import (
	"context"
	"os"
)

func main() {
	app := &App{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Env:    os.Environ(),
	}
	os.Exit(app.Main(context.Background(), os.Args[1:]))
}
