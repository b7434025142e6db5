//go:build unix && !linux

package worker

// setSubreaper is a no-op where the kernel has no subreapers.
func setSubreaper() error { return nil }
