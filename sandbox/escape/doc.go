// Package escape holds the sandbox's escape suite: named attempts to get out of a
// session's worker (writes outside the workspace, secrets of the host, the worker's own
// pipes, processes that outlive the session, the network, symbolic and hard link
// races), each run through the real worker at level strict and level landlock with the
// tools' classifier switched off (bash_mode 7777), so that only the kernel holds the
// line. Every attempt is judged by its effect on the host: a file that must not
// appear, a file that must stay byte-identical, a process that must be gone, bytes that
// must not come back in a tool result, a server that must not be reached. What a
// level is known not to hold is encoded per attempt and logged as a gap.
//
// The package has no non-test code; run it with go test -race ./sandbox/escape/.
package escape
