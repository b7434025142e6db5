package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() {
	childScenarios["pidslimits"] = func() int {
		for _, l := range PidsLimits() {
			report("limit "+l.Dir, fmt.Sprintf("%d/%d", l.Current, l.Max))
		}
		return 0
	}
}

// TestPidsLimits puts a copy of the test binary into a new pids cgroup below this
// process's own, with pids.max 77, and checks that the copy finds that limit, with the
// tasks the cgroup has, among the limits on its own tasks.
func TestPidsLimits(t *testing.T) {
	p, err := NewCgroup(CgroupLimits{Pids: 77})
	if err != nil {
		t.Skipf("no writable pids hierarchy (%v)", err)
	}
	t.Cleanup(func() { assert.NoError(t, p.Remove()) })
	dir := p.Dir()

	cmd := exec.Command("sh", "-c", `echo $$ > "$1" && shift && exec "$@"`, "sh",
		filepath.Join(dir, "cgroup.procs"), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=pidslimits")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var got string
	for line := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "limit "+dir+"="); ok {
			got = v
		}
	}
	require.NotEmpty(t, got, "the child did not find its cgroup's limit:\n%s", out)
	current, max, ok := strings.Cut(got, "/")
	require.True(t, ok, got)
	assert.Equal(t, "77", max)
	n, err := strconv.Atoi(current)
	require.NoError(t, err)
	assert.Positive(t, n, "the child and its threads are in the cgroup")
	assert.Less(t, n, 77)
}

func TestParseCgroups(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		in     string
		ctl    string // "" is pids
		v1, v2 string
	}{
		"v2 only":             {in: "0::/user.slice/user-1000.slice/session-2.scope\n", v2: "/user.slice/user-1000.slice/session-2.scope"},
		"hybrid":              {in: "12:pids:/system.slice/ci.service\n4:memory:/x\n0::/system.slice/ci.service\n", v1: "/system.slice/ci.service", v2: "/system.slice/ci.service"},
		"pids with another":   {in: "3:cpu,pids:/a\n", v1: "/a"},
		"named hierarchy":     {in: "9:name=systemd:/\n", v1: ""},
		"a colon in a path":   {in: "0::/a:b\n", v2: "/a:b"},
		"no newline at end":   {in: "5:pids:/docker/abc", v1: "/docker/abc"},
		"garbled":             {in: "pids\n::\n", v1: ""},
		"empty":               {},
		"pidsx is not pids":   {in: "5:pidsx:/y\n"},
		"the last v2 counts":  {in: "0::/one\n0::/two\n", v2: "/two"},
		"hybrid, memory":      {in: "12:pids:/system.slice/ci.service\n4:memory:/x\n0::/system.slice/ci.service\n", ctl: "memory", v1: "/x", v2: "/system.slice/ci.service"},
		"memory with another": {in: "4:memory,hugetlb:/m\n", ctl: "memory", v1: "/m"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctl := tt.ctl
			if ctl == "" {
				ctl = "pids"
			}
			v1, v2 := parseCgroups(tt.in, ctl)
			assert.Equal(t, tt.v1, v1)
			assert.Equal(t, tt.v2, v2)
		})
	}
}

// FuzzParseCgroups checks the readers of /proc/PID/cgroup, pids.max and the flat-keyed
// files (memory.events) on any text: no panic, a path found is a suffix of a line of
// the text, and a counter found is a number of the text.
func FuzzParseCgroups(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string) {
		for _, ctl := range sessionControllers {
			v1, v2 := parseCgroups(text, ctl)
			for _, p := range []string{v1, v2} {
				if p != "" {
					assert.Contains(t, text, p)
				}
			}
		}
		if n := flatKey(text, "oom_kill"); n != 0 {
			assert.Contains(t, text, strconv.Itoa(n))
		}
		if n, ok := parsePidsMax(text); ok {
			assert.GreaterOrEqual(t, n, 0)
		}
	})
}
