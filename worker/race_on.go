//go:build race

package worker

// workerEnv is the environment of the worker's own processes, as in a build without
// the race detector (one Go processor, race_off.go), and one more setting: a binary
// built with the race detector would wait a second at every exit for late reports,
// which makes every idle exit and Close a second slower.
var workerEnv = []string{"GOMAXPROCS=1", "GORACE=atexit_sleep_ms=0"}

// spareThreads is reserveThreads' count in a worker built with the race detector, twice
// the other's: every system call and lock of such a build is slower, so more of its
// goroutines are in blocking calls at once while a fork bomb floods the session's output
// and its SIGCHLDs, and it starts its threads through cgo. With 4 the race-built worker
// of TestForkBombIsContained died twice in eight runs of the suite ("runtime/cgo:
// pthread_create failed: Resource temporarily unavailable"), at the limit the bomb held.
const spareThreads = 8
