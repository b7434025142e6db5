//go:build !race

package worker

// workerEnv is the environment of the worker's own two stages: nothing (the tools get
// theirs from the config).
var workerEnv = []string{}
