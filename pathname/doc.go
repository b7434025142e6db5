// Package pathname resolves and matches path names: it follows symbolic links the
// way the kernel does when a file is opened, decides containment, and compiles the
// shell's glob patterns. It knows nothing of policy or tools; both the safety policy
// and the file tools use it, so that a check and the open that follows it see the
// same path.
package pathname
