//go:build !linux

package worker

import (
	"context"
	"errors"
	"sync"

	"github.com/agentrun/agentrun/sandbox"
)

// startBridge is not available here: level strict needs Linux.
func startBridge(context.Context, *sync.WaitGroup) (int, error) {
	return 0, errors.New("the network bridge needs Linux")
}

// confineThread has no kernel layers to apply on this platform: only level off runs.
func confineThread(cfg Config) (Ready, error) {
	if cfg.Spec.Level != sandbox.LevelOff {
		return Ready{}, errors.New("sandbox levels other than off need Linux")
	}
	return Ready{Level: sandbox.LevelOff}, nil
}

// proxyEnvOf is empty: level off has no proxy.
func proxyEnvOf(Config) []string { return nil }
