//go:build !linux

package worker

// othersAlive cannot look for processes here, so it says yes: the worker stays.
func othersAlive(bool) bool { return true }
