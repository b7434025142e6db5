package policy

import (
	"path/filepath"
	"slices"
	"strings"
)

// cmdCtx classifies the words of one simple command.
type cmdCtx struct {
	c             *classifier
	v             *verdict
	sc            simple
	stdinDownload bool // an earlier pipeline stage downloads
	subDownload   bool // a substitution in the words downloads
	prog          token
}

const rw = WorkspaceRead | WorkspaceWrite

// Command families.
var (
	shellCmds  = []string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "ash"}
	interpCmds = []string{"node", "nodejs", "deno", "bun", "ruby", "perl", "php", "lua", "luajit",
		"tclsh", "rscript", "pwsh", "powershell", "julia", "irb", "osascript", "pypy", "pypy3"}
	// noPathCmds take no file arguments; their words are data.
	noPathCmds = []string{"echo", "printf", "export", "declare", "local", "typeset", "readonly", "set", "unset",
		"shift", "return", "exit", "sleep", "true", "false", ":", "seq", "yes", "date", "let", "expr", "alias",
		"unalias", "type", "hash", "wait", "jobs", "umask", "ulimit", "shopt", "pwd", "whoami", "id", "uname",
		"nproc", "tput", "read", "break", "continue", "which", "getconf", "printenv"}
	buildCmds = []string{"make", "gmake", "cmake", "ninja", "meson", "bazel", "bazelisk", "gradle", "gradlew",
		"mvn", "mvnw", "ant", "just", "scons", "tox", "nox", "pytest", "py.test", "jest", "vitest", "mocha",
		"phpunit", "rspec", "rake", "ctest", "tsc", "gcc", "g++", "cc", "c++", "clang", "clang++", "rustc",
		"javac", "java", "dotnet", "swift", "zig", "ghc", "stack", "cabal", "mix", "elixir", "erl", "ocaml", "dune"}
	systemExecCmds = []string{"shutdown", "reboot", "halt", "poweroff", "init", "telinit", "systemctl",
		"service", "launchctl", "chroot", "insmod", "rmmod", "modprobe", "killall", "pkill", "docker", "podman",
		"nerdctl", "nsenter", "unshare", "setcap", "capsh"}
	systemWriteCmds = []string{"mke2fs", "mkswap", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted",
		"diskutil", "mount", "umount", "swapon", "swapoff", "wipefs", "losetup", "cryptsetup", "hdparm",
		"blkdiscard", "badblocks", "e2fsck", "tune2fs", "resize2fs", "partprobe", "crontab", "useradd",
		"userdel", "usermod", "groupadd", "groupdel", "passwd", "chpasswd", "visudo", "iptables",
		"ip6tables", "nft", "ufw", "sysctl", "update-alternatives", "ldconfig"}
	credentialCmds = map[string]string{
		"aws": "~/.aws", "gcloud": "~/.config/gcloud", "gsutil": "~/.config/gcloud", "az": "~/.azure",
		"kubectl": "~/.kube", "helm": "~/.kube", "gh": "~/.config/gh", "vault": "~/.vault-token",
	}
	netCmds = []string{"nc", "ncat", "netcat", "socat", "telnet", "ftp", "sftp", "tftp", "lftp", "curlie", "xh"}
	// patternCmds take a pattern or program as their first operand.
	patternCmds   = []string{"grep", "egrep", "fgrep", "rg", "ag", "ack", "awk", "gawk", "mawk", "nawk", "jq", "yq", "gojq"}
	writeAllCmds  = []string{"rm", "rmdir", "mkdir", "touch", "truncate", "shred", "unlink", "tee", "mkfifo", "mknod", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "unzip", "zip", "7z", "tar", "ar", "split", "csplit", "mv"}
	copyCmds      = []string{"cp", "ln", "install", "rsync"}
	ownerCmds     = []string{"chmod", "chown", "chgrp"}
	prefixValued  = map[string]string{"nice": "n", "timeout": "sk", "stdbuf": "ioe", "ionice": "cnp", "xargs": "InPdLsaE", "watch": "nd", "exec": "a", "taskset": "", "chrt": "", "command": "", "builtin": "", "nohup": "", "setsid": "", "unbuffer": "", "caffeinate": "tw", "time": "fo", "env": "uCS"}
	controlStarts = []string{"if", "while", "until"}
	controlSkips  = []string{"then", "do", "else", "elif", "!", "{", "[["}
	controlEnds   = []string{"fi", "done", "esac", "}", "]]"}
	controlLists  = []string{"for", "select", "case", "function", "coproc"}
)

// cmdName is the lower-case base name of a command word.
func cmdName(w token) string {
	return strings.ToLower(filepath.Base(w.text))
}

// run strips command prefixes (sudo, env, nice, timeout, shell keywords …) and
// classifies the command they run.
func (x *cmdCtx) run(words []token) {
	for guard := 0; len(words) > 0 && guard < 32; guard++ {
		name := cmdName(words[0])
		switch {
		case name == "sudo" || name == "doas" || name == "pkexec" || name == "run0":
			x.v.add(SystemExecute, name+" runs commands as another user")
			_, words = walkArgs(words[1:], "ugCDhpRrtTU", []string{"--user", "--group", "--chdir", "--host", "--prompt", "--role", "--type"}, true)
		case name == "su":
			x.v.add(SystemExecute, "su runs commands as another user")
			opts, _ := walkArgs(words[1:], "cs", []string{"--command", "--shell"}, false)
			for _, o := range opts {
				if o.name == "-c" || o.name == "--command" {
					x.c.nested(x.v, o.value.text)
				}
			}
			return
		case slices.Contains(controlStarts, name):
			x.v.add(WorkspaceExecute, "shell control flow ("+name+")")
			words = words[1:]
		case slices.Contains(controlSkips, name):
			if name == "{" {
				x.v.add(WorkspaceExecute, "a shell command group")
			}
			words = words[1:]
		case slices.Contains(controlEnds, name):
			return
		case slices.Contains(controlLists, name):
			x.v.add(WorkspaceExecute, "shell control flow ("+name+")")
			x.operands(words[1:], WorkspaceRead)
			return
		case hasKey(prefixValued, name):
			if name == "xargs" {
				x.v.add(WorkspaceExecute, "xargs runs commands")
			}
			opts, rest := walkArgs(words[1:], prefixValued[name], nil, true)
			for _, o := range opts {
				if name == "env" && (o.name == "-S" || o.name == "--split-string") {
					x.c.nested(x.v, o.value.text)
				}
			}
			for len(rest) > 0 && isAssignment(rest[0]) {
				rest = rest[1:]
			}
			if name == "timeout" && len(rest) > 0 {
				rest = rest[1:] // the duration
			}
			words = rest
		default:
			x.dispatch(name, words[0], words[1:])
			return
		}
	}
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// dispatch classifies a command by its name.
func (x *cmdCtx) dispatch(name string, prog token, args []token) {
	x.prog = prog
	if strings.Contains(prog.text, subMark) {
		x.v.add(WorkspaceExecute, "runs the output of a command")
		if x.subDownload {
			x.v.add(NetworkExecute, "runs the output of a download")
		}
		x.operands(args, WorkspaceRead)
		return
	}
	if strings.Contains(prog.text, "/") {
		x.c.path(x.v, prog, WorkspaceRead)
		x.v.add(WorkspaceExecute, "runs "+prog.text)
	}
	switch {
	case slices.Contains(shellCmds, name):
		x.shell(name, args)
	case slices.Contains(interpCmds, name) || strings.HasPrefix(name, "python"):
		x.interpreter(name, args)
	case name == "eval":
		x.v.add(WorkspaceExecute, "eval runs a string as a command")
		if x.subDownload {
			x.v.add(NetworkExecute, "eval runs a download")
		}
		var parts []string
		for _, a := range args {
			parts = append(parts, a.text)
		}
		x.c.nested(x.v, strings.Join(parts, " "))
	case name == "source" || name == ".":
		x.v.add(WorkspaceExecute, name+" runs a script")
		if x.subDownload || x.stdinDownload && len(args) > 0 && (args[0].text == "/dev/stdin" || args[0].text == "-") {
			x.v.add(NetworkExecute, name+" runs a download")
		}
		x.operands(args, WorkspaceRead)
	case name == "trap":
		if len(args) > 0 {
			x.c.nested(x.v, args[0].text)
		}
	case name == "cd" || name == "pushd" || name == "popd":
		x.operands(args, WorkspaceRead)
		if name == "popd" {
			x.c.cwd = unknownDir
			return
		}
		_, ops := walkArgs(args, "", nil, false)
		x.c.cd(ops)
	case slices.Contains(noPathCmds, name):
	case name == "curl" || name == "wget" || name == "aria2c" || name == "http" || name == "https" || name == "fetch":
		x.download(name, args)
	case name == "git":
		x.git(args)
	case name == "ssh":
		x.v.add(NetworkRead|NetworkWrite|NetworkExecute, "ssh runs commands on another host")
		opts, _ := walkArgs(args, "BbcDEeFIiJLlmOoPpQRSWw", nil, false)
		x.optPaths(opts, WorkspaceRead, "-i", "-F", "-E", "-S")
	case name == "scp" || name == "rsync" && hasRemote(args):
		x.v.add(NetworkRead|NetworkWrite, name+" copies over the network")
		x.copyLike(args, "cFiloPSJe")
	case slices.Contains(netCmds, name):
		x.v.add(NetworkRead|NetworkWrite, name+" opens network connections")
		x.operands(args, WorkspaceRead)
	case name == "dd":
		x.dd(args)
	case name == "rm":
		x.rm(args)
	case name == "find":
		x.find(args)
	case name == "sed":
		x.sed(args)
	case slices.Contains(patternCmds, name):
		x.pattern(name, args)
	case slices.Contains(copyCmds, name):
		x.copyLike(args, "tSm")
	case slices.Contains(ownerCmds, name):
		opts, ops := walkArgs(args, "", nil, false)
		x.optPaths(opts, WorkspaceRead, "--reference")
		if len(ops) > 0 && !hasOpt(opts, "--reference") {
			ops = ops[1:]
		}
		x.writeOperands(ops)
	case slices.Contains(writeAllCmds, name):
		opts, ops := walkArgs(args, writeValued(name), nil, false)
		x.optPaths(opts, rw, "-C", "--directory", "-f", "--file", "-d", "-t", "--target-directory")
		x.writeOperands(ops)
	case name == "patch":
		opts, ops := walkArgs(args, "BDdiFopruVYzg", nil, false)
		x.optPaths(opts, WorkspaceRead, "-i", "--input")
		x.optPaths(opts, rw, "-o", "--output", "-d", "--directory")
		x.writeOperands(ops)
	case name == "gofmt" || name == "goimports":
		opts, ops := walkArgs(args, "r", nil, false)
		if hasOpt(opts, "-w") {
			x.writeOperands(ops)
			return
		}
		x.operands(ops, WorkspaceRead)
	default:
		x.tools(name, args)
	}
}

// tools classifies language tool chains, package managers and system commands.
func (x *cmdCtx) tools(name string, args []token) {
	sub := ""
	if _, ops := walkArgs(args, "C", nil, false); len(ops) > 0 {
		sub = strings.ToLower(ops[0].text)
	}
	global := hasWord(args, "-g", "--global", "--user")
	switch {
	case slices.Contains(systemExecCmds, name):
		x.v.add(SystemExecute, name+" controls the system beyond the workspace")
	case slices.Contains(systemWriteCmds, name) || strings.HasPrefix(name, "mkfs") || strings.HasPrefix(name, "fsck"):
		x.v.add(SystemWrite, name+" changes system configuration, disks or file systems")
	case credentialCmds[name] != "":
		x.v.add(SystemRead, name+" reads credentials from "+credentialCmds[name])
		x.v.add(NetworkRead|NetworkWrite, name+" talks to a remote service")
	case name == "kill":
		if n := len(args); n > 0 && args[n-1].text == "-1" && (n > 1 || hasWord(args, "--")) {
			x.v.add(SystemExecute, "kill -1 signals every process")
		}
		return
	case slices.Contains(buildCmds, name):
		x.v.add(WorkspaceExecute|WorkspaceWrite, name+" builds or runs code")
	case name == "go":
		x.goTool(sub)
	case name == "cargo":
		x.v.add(NetworkRead, "cargo downloads crates")
		if sub == "install" {
			x.v.add(ExternalWrite|WorkspaceExecute, "cargo install writes outside the workspace")
		} else {
			x.v.add(WorkspaceExecute|WorkspaceWrite, "cargo builds or runs code")
		}
	case name == "npm" || name == "pnpm" || name == "yarn" || name == "npx" || name == "bunx":
		x.v.add(WorkspaceExecute|WorkspaceWrite, name+" runs package scripts")
		if name == "npx" || name == "bunx" || slices.Contains([]string{"", "install", "i", "ci", "add", "update", "upgrade", "up", "remove", "rm", "uninstall", "dlx", "exec", "x"}, sub) {
			x.v.add(NetworkRead, name+" downloads packages")
		}
		if global {
			x.v.add(ExternalWrite, name+" --global installs outside the workspace")
		}
	case slices.Contains([]string{"pip", "pip3", "pipx", "poetry", "gem", "conda", "mamba", "uv"}, name):
		x.pkgInstall(name, sub)
	case slices.Contains([]string{"apt", "apt-get", "yum", "dnf", "apk", "pacman", "zypper", "snap", "port", "dpkg", "rpm", "flatpak", "emerge"}, name):
		if slices.Contains([]string{"install", "remove", "purge", "upgrade", "update", "dist-upgrade", "full-upgrade", "add", "del", "autoremove", "reinstall", "-i", "-s", "-r", "-u", "-syu", "-sy"}, sub) {
			x.v.add(SystemWrite|NetworkRead, name+" "+sub+" changes system packages")
		}
	case name == "brew":
		if slices.Contains([]string{"install", "uninstall", "reinstall", "upgrade", "update", "tap", "remove", "rm"}, sub) {
			x.v.add(ExternalWrite|NetworkRead, "brew "+sub+" changes packages outside the workspace")
		}
	}
	x.operands(args, WorkspaceRead)
}

// goTool classifies a go subcommand.
func (x *cmdCtx) goTool(sub string) {
	switch sub {
	case "build", "test", "run", "generate", "vet", "tool", "fix":
		x.v.add(WorkspaceExecute|WorkspaceWrite, "go "+sub+" builds or runs code")
	case "get", "mod", "work":
		x.v.add(NetworkRead|WorkspaceWrite, "go "+sub+" changes the module and downloads")
	case "install":
		x.v.add(NetworkRead|ExternalWrite|WorkspaceExecute, "go install writes outside the workspace")
	case "fmt", "clean":
		x.v.add(WorkspaceWrite, "go "+sub+" changes files")
	}
}

// pkgInstall classifies Python and Ruby package managers.
func (x *cmdCtx) pkgInstall(name, sub string) {
	if !slices.Contains([]string{"install", "uninstall", "add", "remove", "sync", "update", "upgrade", "pip", "venv", "create", "lock"}, sub) {
		return
	}
	x.v.add(NetworkRead, name+" downloads packages")
	inWorkspace := name == "uv" || strings.Contains(x.prog.text, "/")
	if inWorkspace {
		x.v.add(WorkspaceWrite, name+" installs into the workspace")
		return
	}
	x.v.add(ExternalWrite, name+" "+sub+" installs outside the workspace")
}
