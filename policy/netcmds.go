package policy

import (
	"slices"
	"strings"
)

var (
	writeMethods = []string{"POST", "PUT", "PATCH", "DELETE"}
	curlUpload   = []string{"-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "--json", "-F", "--form", "--form-string", "-T", "--upload-file"}
	curlLong     = []string{"--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "--json", "--form",
		"--form-string", "--upload-file", "--request", "--output", "--output-dir", "--config", "--header", "--user",
		"--user-agent", "--referer", "--cookie", "--cookie-jar", "--cert", "--key", "--cacert", "--proxy",
		"--max-time", "--connect-timeout", "--retry", "--range", "--write-out", "--url"}
	wgetLong = []string{"--output-document", "--output-file", "--append-output", "--directory-prefix", "--input-file",
		"--post-data", "--post-file", "--body-data", "--body-file", "--method", "--header", "--user-agent", "--user",
		"--password", "--load-cookies", "--save-cookies", "--config", "--certificate", "--private-key"}
)

// download classifies curl, wget and other HTTP clients.
func (x *cmdCtx) download(name string, args []token) {
	x.v.add(NetworkRead, name+" downloads")
	switch name {
	case "curl":
		x.curl(args)
	case "wget":
		x.wget(args)
	default:
		_, ops := walkArgs(args, "odp", nil, false)
		for _, w := range ops {
			if slices.Contains(writeMethods, strings.ToUpper(w.text)) || (name == "http" || name == "https") && strings.ContainsAny(w.text, "=@") {
				x.v.add(NetworkWrite, name+" sends data")
			}
		}
		if name == "aria2c" || name == "fetch" {
			x.c.path(x.v, word("."), WorkspaceWrite)
		}
		x.operands(args, WorkspaceRead)
	}
}

func (x *cmdCtx) curl(args []token) {
	opts, ops := walkArgs(args, "dFTXoHuAeKwmxrbcEUYyzCPQ", curlLong, false)
	for _, o := range opts {
		switch {
		case slices.Contains(curlUpload, o.name):
			x.v.add(NetworkWrite, "curl "+o.name+" uploads data")
			if f, ok := uploadFile(o.name, o.value.text); ok {
				x.c.path(x.v, word(f), WorkspaceRead)
			}
		case o.name == "-X" || o.name == "--request":
			if slices.Contains(writeMethods, strings.ToUpper(o.value.text)) {
				x.v.add(NetworkWrite, "curl -X "+strings.ToUpper(o.value.text)+" sends data")
			}
		case o.name == "-o" || o.name == "--output" || o.name == "--output-dir" || o.name == "-c" || o.name == "--cookie-jar":
			x.c.path(x.v, o.value, WorkspaceWrite)
		case o.name == "-O" || o.name == "--remote-name" || o.name == "--remote-name-all":
			x.c.path(x.v, word("."), WorkspaceWrite)
		case o.name == "-K" || o.name == "--config" || o.name == "--cert" || o.name == "-E" || o.name == "--key" || o.name == "--cacert":
			x.c.path(x.v, o.value, WorkspaceRead)
		case (o.name == "-b" || o.name == "--cookie") && !strings.Contains(o.value.text, "="):
			x.c.path(x.v, o.value, WorkspaceRead)
		}
	}
	for _, w := range ops {
		x.c.path(x.v, w, WorkspaceRead)
	}
}

// uploadFile returns the file an upload option reads: -d @file, -F name=@file or
// name=<file, -T file.
func uploadFile(name, v string) (string, bool) {
	if name == "-T" || name == "--upload-file" {
		return v, v != "" && v != "-" && v != "."
	}
	i := strings.IndexAny(v, "@<")
	if i < 0 || (i > 0 && v[i-1] != '=') {
		return "", false
	}
	f := v[i+1:]
	if j := strings.IndexByte(f, ';'); j >= 0 {
		f = f[:j]
	}
	return f, f != "" && f != "-"
}

func (x *cmdCtx) wget(args []token) {
	opts, ops := walkArgs(args, "OoaPiUeTtwQlADIXRB", wgetLong, false)
	saves := true
	for _, o := range opts {
		switch o.name {
		case "-O", "--output-document":
			saves = false
			if o.value.text != "-" {
				x.c.path(x.v, o.value, WorkspaceWrite)
			}
		case "-P", "--directory-prefix":
			saves = false
			x.c.path(x.v, o.value, WorkspaceWrite)
		case "-o", "-a", "--output-file", "--append-output", "--save-cookies":
			x.c.path(x.v, o.value, WorkspaceWrite)
		case "-i", "--input-file", "--load-cookies", "--config", "--certificate", "--private-key":
			x.c.path(x.v, o.value, WorkspaceRead)
		case "--post-data", "--body-data":
			x.v.add(NetworkWrite, "wget "+o.name+" uploads data")
		case "--post-file", "--body-file":
			x.v.add(NetworkWrite, "wget "+o.name+" uploads a file")
			x.c.path(x.v, o.value, WorkspaceRead)
		case "--method":
			if slices.Contains(writeMethods, strings.ToUpper(o.value.text)) {
				x.v.add(NetworkWrite, "wget --method "+strings.ToUpper(o.value.text)+" sends data")
			}
		}
	}
	if saves {
		x.c.path(x.v, word("."), WorkspaceWrite)
	}
	for _, w := range ops {
		x.c.path(x.v, w, WorkspaceRead)
	}
}

// git classifies a git subcommand.
func (x *cmdCtx) git(args []token) {
	gopts, ops := walkArgs(args, "Cc", []string{"--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}, true)
	if len(ops) == 0 {
		return
	}
	sub, rest := strings.ToLower(ops[0].text), ops[1:]
	_, subOps := walkArgs(rest, "", nil, false)
	perm := WorkspaceRead
	switch sub {
	case "clone":
		x.v.add(NetworkRead, "git clone downloads")
		_, cops := walkArgs(rest, "bcjou", []string{"--branch", "--config", "--origin", "--upload-pack", "--depth", "--reference", "--separate-git-dir", "--template", "--filter"}, false)
		switch {
		case len(cops) >= 2:
			x.c.path(x.v, cops[0], WorkspaceRead)
			x.c.path(x.v, cops[len(cops)-1], rw)
		case len(cops) == 1:
			x.c.path(x.v, cops[0], WorkspaceRead)
			x.c.path(x.v, word("."), WorkspaceWrite)
		}
		return
	case "fetch", "pull", "ls-remote", "submodule":
		x.v.add(NetworkRead, "git "+sub+" downloads")
		if sub != "ls-remote" {
			perm = rw
		}
		if sub == "pull" {
			x.v.add(WorkspaceExecute, "git pull merges and runs hooks")
		}
	case "push":
		x.v.add(NetworkWrite, "git push uploads commits")
	case "remote":
		if len(subOps) > 0 && subOps[0].text == "update" {
			x.v.add(NetworkRead, "git remote update downloads")
		}
		if len(subOps) > 0 {
			perm = rw
		}
	case "commit", "merge", "rebase", "cherry-pick", "am", "checkout", "switch", "revert", "stash", "bisect":
		x.v.add(WorkspaceExecute, "git "+sub+" runs hooks")
		perm = rw
	case "add", "apply", "clean", "rm", "mv", "init", "reset", "restore", "gc", "worktree", "notes",
		"update-index", "update-ref", "prune", "repack", "filter-branch", "replace":
		perm = rw
	case "branch", "tag":
		if len(subOps) > 0 || hasWord(rest, "-d", "-D", "-m", "-M", "-c", "-C", "--delete", "--move") {
			perm = rw
		}
	case "config":
		switch {
		case hasWord(rest, "--global"):
			x.v.add(ExternalWrite, "git config --global writes ~/.gitconfig")
		case hasWord(rest, "--system"):
			x.v.add(SystemWrite, "git config --system writes /etc/gitconfig")
		case !hasWord(rest, "--get", "--get-all", "--list", "-l", "--get-regexp") && len(subOps) > 1:
			perm = rw
		}
	}
	for _, o := range gopts {
		if o.hasValue && o.name != "-c" {
			x.c.path(x.v, o.value, perm)
		}
	}
	if perm&WorkspaceWrite != 0 {
		x.c.path(x.v, word("."), perm) // the repository
	}
	for _, w := range subOps {
		x.c.path(x.v, w, perm)
	}
}

// hasRemote reports whether an rsync argument names another host.
func hasRemote(args []token) bool {
	for _, a := range args {
		t := a.text
		if strings.HasPrefix(t, "-") {
			continue
		}
		if strings.HasPrefix(t, "rsync://") {
			return true
		}
		if _, ok := pathText(t); !ok && strings.Contains(t, ":") && !strings.Contains(t, "://") {
			return true
		}
	}
	return false
}
