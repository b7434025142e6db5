package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// buildVersion is set with -ldflags "-X main.buildVersion=v1.2.3".
var buildVersion = ""

// version is the build's version: the one set at link time, else the module version
// from the build info, else its VCS revision ("dev+3f2a9c1d0e4b", "-dirty" when the
// tree had changes), and "dev" only when the build knows none of these.
func version() string {
	info, _ := debug.ReadBuildInfo()
	return versionOf(buildVersion, info)
}

func versionOf(linked string, info *debug.BuildInfo) string {
	if linked != "" {
		return linked
	}
	if info == nil {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "dev"
	}
	v := "dev+" + rev[:min(len(rev), 12)]
	if modified == "true" {
		v += "-dirty"
	}
	return v
}

func (a *App) cmdVersion(_ context.Context, args []string) error {
	fs := newFlags("version")
	pos, err := a.parse(fs, "agentrun version", "  agentrun version    # version, Go release and platform, e.g. agentrun v1.2.0 (go1.26.0 linux/amd64)", args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("version: unexpected argument %q", pos[0])
	}
	_, _ = fmt.Fprintf(a.Stdout, "agentrun %s (%s %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
