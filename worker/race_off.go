//go:build !race

package worker

// workerEnv is the environment of the worker's own processes (its two stages and a
// run's spawner; the tools get theirs from the config): one Go processor. A worker
// serves one session, whose tools run as processes of their own, so a second
// processor would only add threads, memory and scheduling per session: with one, a
// strict worker costs a quarter less CPU and PSS (BenchmarkManySessions).
var workerEnv = []string{"GOMAXPROCS=1"}

// spareThreads is how many idle OS threads the worker keeps at hand beyond those it
// has started by the time it serves (reserveThreads).
const spareThreads = 4
