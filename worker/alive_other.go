//go:build !linux

package worker

// othersAlive cannot look for processes here, so it says yes: the worker stays.
func othersAlive(_, _ bool) bool { return true }
