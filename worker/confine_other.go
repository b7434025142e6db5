//go:build !linux

package worker

import (
	"context"
	"errors"
	"os"
	"sync"

	"github.com/agentrun/agentrun/sandbox"
)

// startBridge is not available here: level strict needs Linux.
func startBridge(context.Context, *sync.WaitGroup) (int, error) {
	return 0, errors.New("the network bridge needs Linux")
}

// confine has no kernel layers to apply on this platform: only level off runs.
func confine(cfg Config) (Ready, []string, error) {
	if cfg.Spec.Level != sandbox.LevelOff {
		return Ready{}, nil, errors.New("sandbox levels other than off need Linux")
	}
	return Ready{Level: sandbox.LevelOff, PID: os.Getpid()}, nil, nil
}
