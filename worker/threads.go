package worker

import (
	"runtime"
	"sync"
)

// reserveThreads makes the Go runtime start n more OS threads now and keep them idle.
// The worker shares its session's pids limit with the tools' processes, and the runtime
// aborts the process when it cannot start a thread it needs (a goroutine blocked in a
// system call hands its processor to another thread): a fork bomb that held every task
// of the limit used to take the worker down with it. The runtime never ends an idle
// thread, so the ones started here serve those moments.
func reserveThreads(n int) {
	var locked, release, ended sync.WaitGroup
	release.Add(1)
	for range n {
		locked.Add(1)
		ended.Go(func() {
			// Each goroutine holds a thread of its own while it waits, so the
			// runtime starts another for the rest; unlocked, the thread goes idle.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			locked.Done()
			release.Wait()
		})
	}
	locked.Wait()
	release.Done()
	ended.Wait()
}
