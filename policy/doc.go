// Package policy is the bash_mode safety policy: four octal digits (system, external,
// network, workspace; read 4, write 2, execute 1) and the checks that say what a Bash
// command or a file tool's path requires of them.
//
// Threat model. The policy explains; the kernel enforces. A session's tools run inside
// the sandbox package's confinement (namespaces, Landlock, seccomp), shaped by the same
// bash_mode, and that is the boundary that holds against a model that tries to get out.
// This package runs first, in the tool, so that a refusal comes early and names its
// cause ("missing system write (/etc/x is a system path)") instead of surfacing as an
// EPERM halfway through a command.
//
// It refuses, by a heuristic scan of the command text: paths outside the workspace
// (resolved against the workspace and home directory, following symbolic links that
// exist), system directories, credential stores wherever they lie (~/.ssh, .env, *.pem,
// token files, and globs that can expand to them), network sockets and URLs, downloads
// piped into a shell or interpreter, inline scripts (bash -c, eval, python -c) by
// classifying their text again, package installs, system administration commands and
// fork bombs. An invalid mode is the zero Policy, which denies everything.
//
// It does not try to catch what only running the command can tell: the value of a
// variable or a substitution, a path assembled at run time, what a program or script
// does once started, links created by the command itself, or a race between the check
// and the open (the file tools check again what they opened). Those are the kernel's.
// The scan never fails on odd input; what it cannot read it scopes conservatively.
package policy
