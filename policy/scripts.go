package policy

import "strings"

// shell classifies sh/bash/…: the script is a -c string, a file, or stdin.
func (x *cmdCtx) shell(name string, args []token) {
	x.v.add(WorkspaceExecute, name+" runs a script")
	inline, file := false, false
	for i := 0; i < len(args); i++ {
		a := args[i].text
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			if a == "--" && i+1 < len(args) {
				i++
				a = args[i].text
			}
			if a != "-" && a != "--" && a != "/dev/stdin" {
				file = true
				x.c.path(x.v, args[i], WorkspaceRead)
				x.operands(args[i+1:], WorkspaceRead)
			}
			break
		}
		switch {
		case a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file":
			i++
		case !strings.HasPrefix(a, "--") && strings.Contains(a, "c"):
			inline = true
			if i+1 < len(args) {
				x.c.nested(x.v, args[i+1].text)
				x.operands(args[i+2:], WorkspaceRead)
			}
			i = len(args)
		}
	}
	fromStdin := !inline && !file
	if fromStdin && x.stdinDownload {
		x.v.add(NetworkExecute, "a download piped to "+name)
	}
	if x.subDownload {
		x.v.add(NetworkExecute, name+" runs a downloaded script")
	}
	if fromStdin {
		for _, r := range x.sc.redirs {
			if r.tok.text == "<<" || r.tok.text == "<<-" {
				x.c.nested(x.v, r.tok.body)
			}
			if r.tok.text == "<<<" {
				x.c.nested(x.v, r.target.text)
			}
		}
	}
}

// interpreter classifies python, node, perl and friends.
func (x *cmdCtx) interpreter(name string, args []token) {
	x.v.add(WorkspaceExecute, name+" runs a program")
	inline, file := false, false
	inPlace := false
	for i := 0; i < len(args); i++ {
		a := args[i].text
		if a == "-" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "--" {
			if a == "--" {
				i++
			}
			if i < len(args) {
				file = true
				perm := WorkspaceRead
				if inPlace {
					perm = rw
				}
				x.c.path(x.v, args[i], WorkspaceRead)
				x.operands(args[i+1:], perm)
			}
			break
		}
		switch {
		case a == "-m":
			inline = true
			if i+1 < len(args) && args[i+1].text == "pip" {
				sub := ""
				if i+2 < len(args) {
					sub = args[i+2].text
				}
				x.pkgInstall("pip", sub)
			}
			x.operands(args[min(i+2, len(args)):], WorkspaceRead)
			i = len(args)
		case a == "-c" || a == "-e" || a == "-E" || a == "-r" || a == "--eval" || a == "-p" || a == "--print" ||
			strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a[1:], "e") && (name == "perl" || name == "ruby"):
			inline = true
			inPlace = inPlace || (name == "perl" || name == "ruby") && strings.Contains(a, "i")
			perm := WorkspaceRead
			if inPlace {
				perm = rw
			}
			x.operands(args[min(i+2, len(args)):], perm)
			i = len(args)
		case (name == "perl" || name == "ruby") && strings.HasPrefix(a, "-") && strings.Contains(a, "i"):
			inPlace = true
		}
	}
	if !inline && !file && x.stdinDownload {
		x.v.add(NetworkExecute, "a download piped to "+name)
	}
	if x.subDownload {
		x.v.add(NetworkExecute, name+" runs downloaded code")
	}
}
