//go:build race

package worker

// workerEnv is the environment of the worker's own two stages (the tools get theirs
// from the config): a binary built with the race detector would wait a second at every
// exit for late reports, which makes every idle exit and Close a second slower.
var workerEnv = []string{"GORACE=atexit_sleep_ms=0"}
