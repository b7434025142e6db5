//go:build race

package worker

// workerEnv is the environment of the worker's own processes, as in a build without
// the race detector (one Go processor, race_off.go), and one more setting: a binary
// built with the race detector would wait a second at every exit for late reports,
// which makes every idle exit and Close a second slower.
var workerEnv = []string{"GOMAXPROCS=1", "GORACE=atexit_sleep_ms=0"}
