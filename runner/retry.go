package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentrun/agentrun/jobs"
	"github.com/agentrun/agentrun/protocol"
)

// DefaultRetry are the failure classes that resume runs again when no others are
// chosen: sessions that an interrupted run cancelled and sessions that crashed, whose
// results say nothing about the task.
var DefaultRetry = []string{string(protocol.StatusCancelled), string(protocol.StatusCrashed)}

// RetryClasses lists the failure classes, as result.json spells them: every status but
// success without its "error_" prefix (provider, timeout, inactivity, checks, …,
// cancelled, crashed), then every error kind not among them (http_429, overloaded,
// server, network, …).
func RetryClasses() []string {
	var out []string
	for _, st := range protocol.Statuses() {
		if st != protocol.StatusSuccess {
			out = append(out, strings.TrimPrefix(string(st), "error_"))
		}
	}
	for _, k := range protocol.ErrorKinds() {
		if !slices.Contains(out, string(k)) {
			out = append(out, string(k))
		}
	}
	return out
}

// ParseRetry reads a comma-separated list of failure classes (RetryClasses; a status
// may also be written whole, as error_provider). Each class is kept once, in order.
func ParseRetry(v string) ([]string, error) {
	classes := RetryClasses()
	var out []string
	for _, word := range strings.Split(v, ",") {
		word = strings.TrimSpace(word)
		class := strings.TrimPrefix(word, "error_")
		switch {
		case word == "":
			return nil, fmt.Errorf("%q: empty class; want a comma-separated list such as provider,timeout,inactivity", v)
		case word == string(protocol.StatusSuccess):
			return nil, fmt.Errorf("%q is not a failure: successes always stand", word)
		case !slices.Contains(classes, class):
			msg := fmt.Sprintf("unknown failure class %q", word)
			if sg := jobs.Suggest(class, classes); sg != "" {
				return nil, fmt.Errorf("%s; did you mean %q?", msg, sg)
			}
			return nil, fmt.Errorf("%s; want statuses or error kinds of result.json: %s", msg, strings.Join(classes, ", "))
		case !slices.Contains(out, class):
			out = append(out, class)
		}
	}
	return out, nil
}

// retried reports whether resume runs an earlier result again: a success stands; with
// rerunFailed every failure runs again; else the failures whose status or error kind
// is one of classes.
func retried(res *protocol.Result, classes []string, rerunFailed bool) bool {
	switch {
	case res.Status == protocol.StatusSuccess:
		return false
	case rerunFailed:
		return true
	}
	for _, c := range classes {
		if strings.TrimPrefix(string(res.Status), "error_") == c || res.Error != nil && string(res.Error.Kind) == c {
			return true
		}
	}
	return false
}
