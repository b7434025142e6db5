package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	bashpolicy "github.com/agentrun/agentrun/policy"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/sink"
)

// policyFile keeps an exec session's safety policy, so that --continue and --session
// apply it again.
const policyFile = "policy.json"

// policy is what confines an exec session's tools.
type policy struct {
	BashMode string        `json:"bash_mode"`
	Level    sandbox.Level `json:"sandbox_level,omitempty"`
}

// resolvePolicy combines the flags with what the session folder stored: a flag wins,
// then the stored value, then the defaults.
func resolvePolicy(dir, mode, level string) (policy, error) {
	var p policy
	b, err := os.ReadFile(filepath.Join(dir, policyFile))
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &p); err != nil {
			return p, fmt.Errorf("exec: %s: %w", filepath.Join(dir, policyFile), err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return p, fmt.Errorf("exec: %w", err)
	}
	if mode != "" {
		p.BashMode = mode
	}
	if p.BashMode == "" {
		p.BashMode = bashpolicy.DefaultMode
	}
	if _, err := bashpolicy.Parse(p.BashMode); err != nil {
		return p, usagef("exec: --bash-mode: %v", err)
	}
	if level != "" {
		l, err := sandbox.ParseLevel(level)
		if err != nil {
			return p, usagef("exec: --sandbox: %v", err)
		}
		p.Level = l
	}
	return p, nil
}

// save writes the policy into the session folder, with the session's files.
func (p policy) save(dir string, files *sink.Files) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if err := files.WriteFile(filepath.Join(dir, policyFile), b, false); err != nil {
		return fmt.Errorf("exec: save policy: %w", err)
	}
	return nil
}
