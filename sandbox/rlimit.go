package sandbox

// Limits are resource limits for a session's worker and every process it starts; a
// zero field leaves that limit as it is. Soft and hard limits are both set, so tools
// cannot raise them again.
type Limits struct {
	// Processes is RLIMIT_NPROC: tasks (processes and threads) of the worker's user.
	Processes uint64
	// FileSize is RLIMIT_FSIZE in bytes: writing past it fails with EFBIG (SIGXFSZ).
	FileSize uint64
	// AddressSpace is RLIMIT_AS in bytes of virtual memory per process.
	AddressSpace uint64
	// OpenFiles is RLIMIT_NOFILE: file descriptors per process.
	OpenFiles uint64
}

// DefaultLimits contain a fork bomb, a runaway write and a runaway allocation without
// getting in the way of builds and test suites.
//
// Processes (RLIMIT_NPROC) is the subtle one. The kernel counts it per user, not per
// process tree; since Linux 5.14 the count lives in the user's ucounts, which are per
// user namespace (kernel/ucount.c, inc_rlimit_get_ucounts): a worker in its own user
// namespace is charged only for the tasks of that namespace's user, plus a charge up
// the chain checked against the limit its creator had. So with the strict level one
// session's fork bomb stops at 4096 tasks without counting the runner's threads or the
// other sessions. Without a user namespace (the landlock level) every session of the
// same uid shares the one count, with the runner, so 4096 is also the budget for all
// sessions of a run together; that is the trade-off, chosen high enough for parallel
// `make -j` or `go test` in a few sessions, and low enough to keep a machine alive.
// The kernel never enforces it for global root (uid 0 outside every namespace, even
// when mapped into one as 0) nor for CAP_SYS_RESOURCE or CAP_SYS_ADMIN in the initial
// namespace: a runner started as root must map the worker to a non-root host uid for
// Processes to bite. Threads count too: a Go or JVM tool uses tens of them.
var DefaultLimits = Limits{
	Processes:    4096,
	FileSize:     8 << 30,
	AddressSpace: 16 << 30,
	OpenFiles:    4096,
}

// maxDefaultScratch caps DefaultScratch.
const maxDefaultScratch = 4 << 30

// DefaultScratch is the size of a session's scratch space (Spec.Scratch) unless the
// spec says otherwise, for a machine of memory bytes: a quarter of it, at most 4 GiB.
// The scratch space is memory, and without a size a tmpfs may take half the machine's,
// three of them all of it: a tool that filled /tmp would have the kernel kill
// processes across the machine, the runner's among them.
func DefaultScratch(memory uint64) uint64 {
	return min(memory/4, maxDefaultScratch)
}

// DefaultMemory is the memory limit of a session (Spec.Memory) unless the spec says
// otherwise, for a machine of memory bytes: half of it. The limit counts the session's
// processes and its scratch space together; past it the kernel kills the session's
// largest process, a tool's, not a process of the machine's or the runner.
func DefaultMemory(memory uint64) uint64 { return memory / 2 }
