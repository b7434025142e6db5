//go:build !linux

package worker

import (
	"errors"

	"github.com/agentrun/agentrun/sandbox"
)

// handOverLoopback is not available here: level strict needs Linux.
func handOverLoopback() (int, error) { return 0, errors.New("network at level strict needs Linux") }

// confineThread has no kernel layers to apply on this platform: only level off runs.
func confineThread(cfg Config) (Ready, error) {
	if cfg.Spec.Level != sandbox.LevelOff {
		return Ready{}, errors.New("sandbox levels other than off need Linux")
	}
	return Ready{Level: sandbox.LevelOff}, nil
}

// proxyEnvOf is empty: level off has no proxy.
func proxyEnvOf(Config) []string { return nil }
