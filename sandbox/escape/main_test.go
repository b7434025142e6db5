package escape_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/testexit"
)

// keyVar is the provider key variable the runner holds and no tool may read; keyPrefix
// marks the fake key this suite plants (never a real one).
const (
	keyVar    = "ANTHROPIC_API_KEY"
	keyPrefix = "sk-ant-escape-"
)

// TestMain plants a fake provider key (the sessions' workers are agentrun-worker, from
// workertest): os.Setenv alone changes only the Go runtime's copy, not
// the environment block the kernel shows in /proc/PID/environ, so the binary execs
// itself once with the key in its initial environment (same pid, same arguments).
func TestMain(m *testing.M) {
	if !strings.HasPrefix(os.Getenv(keyVar), keyPrefix) {
		if err := os.Setenv(keyVar, keyPrefix+randomHex(12)); err != nil {
			fmt.Fprintln(os.Stderr, "escape: plant key:", err)
			os.Exit(2)
		}
		err := syscall.Exec("/proc/self/exe", os.Args, os.Environ())
		fmt.Fprintln(os.Stderr, "escape: re-exec with the planted key:", err)
		os.Exit(2)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit))
}

// plantedKey is the fake provider key in this process's environment.
func plantedKey() string { return os.Getenv(keyVar) }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}
