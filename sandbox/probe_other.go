//go:build !linux

package sandbox

// Probe reports every kernel mechanism missing: they are Linux's.
func Probe() Report {
	f := Feature{Reason: ErrNotLinux.Error()}
	return Report{UserNS: f, Landlock: f, Seccomp: f, NoNewPrivs: f, CgroupV2: f, Ptrace: f}
}
