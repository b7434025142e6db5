package agent

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// NewSessionID returns the seed's session id form: YYYYMMDD-HHMMSS-xxxx (UTC, four
// random hex digits).
func NewSessionID(now time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
