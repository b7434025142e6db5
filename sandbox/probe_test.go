package sandbox

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReportLevels(t *testing.T) {
	yes := Feature{OK: true}
	no := func(why string) Feature { return Feature{Reason: why} }
	all := Report{UserNS: yes, Landlock: yes, Seccomp: yes, NoNewPrivs: yes, CgroupV2: yes, LandlockABI: 7}
	for _, tc := range []struct {
		name    string
		edit    func(r *Report)
		best    Level
		strict  string // substring of Supports(LevelStrict)'s error, "" for nil
		landlck string
	}{
		{"everything", func(*Report) {}, LevelStrict, "", ""},
		{"no landlock keeps strict", func(r *Report) { r.Landlock = no("old kernel") }, LevelStrict, "",
			"sandbox level landlock needs landlock: old kernel"},
		{"no user namespaces", func(r *Report) { r.UserNS = no("seccomp profile") }, LevelLandlock,
			"sandbox level strict needs user namespaces: seccomp profile", ""},
		{"no seccomp", func(r *Report) { r.Seccomp = no("not built") }, LevelOff,
			"needs seccomp: not built", "needs seccomp: not built"},
		{"nothing", func(r *Report) {
			*r = Report{UserNS: no("a"), Landlock: no("b"), Seccomp: no("c"), NoNewPrivs: no("d")}
		},
			LevelOff, "needs user namespaces: a; needs seccomp: c; needs no_new_privs: d", "needs landlock: b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := all
			tc.edit(&r)
			assert.Equal(t, tc.best, r.Best())
			assert.NoError(t, r.Supports(LevelOff))
			for l, want := range map[Level]string{LevelStrict: tc.strict, LevelLandlock: tc.landlck} {
				err := r.Supports(l)
				if want == "" {
					assert.NoError(t, err, l)
					continue
				}
				require.Error(t, err, l)
				assert.Contains(t, err.Error(), want)
			}
		})
	}
	assert.Error(t, all.Supports("bogus"))
}

// TestReportNetwork checks that level landlock gives tools the network only with
// Landlock's network rules (ABI 4), and the other levels whatever the ABI.
func TestReportNetwork(t *testing.T) {
	for name, tc := range map[string]struct {
		abi     int
		ptrace  bool
		landlck string // substring of SupportsNetwork(LevelLandlock)'s error, "" for nil
	}{
		"abi 3, Linux 6.6": {3, true, "needs Landlock ABI 4 (Linux 6.7) to keep the tools' TCP to the proxy; this kernel has ABI 3"},
		"abi 4":            {4, true, ""},
		"abi 8":            {8, true, ""},
		"no ptrace":        {8, false, "needs ptrace access to the tools, to make their connections to the proxy: kernel.yama.ptrace_scope is 3"},
	} {
		t.Run(name, func(t *testing.T) {
			r := Report{LandlockABI: tc.abi, Ptrace: Feature{OK: tc.ptrace, Reason: "kernel.yama.ptrace_scope is 3"}}
			assert.NoError(t, r.SupportsNetwork(LevelStrict))
			assert.NoError(t, r.SupportsNetwork(LevelOff))
			err := r.SupportsNetwork(LevelLandlock)
			if tc.landlck == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.landlck)
		})
	}
}

func TestReportWriteText(t *testing.T) {
	r := Report{
		UserNS:      Feature{Reason: "user.max_user_namespaces is 0"},
		Landlock:    Feature{OK: true, Reason: "ABI 7"},
		Seccomp:     Feature{OK: true, Reason: "filter mode"},
		NoNewPrivs:  Feature{OK: true},
		CgroupV2:    Feature{OK: true, Reason: "unified hierarchy at /sys/fs/cgroup"},
		Ptrace:      Feature{OK: true, Reason: "kernel.yama.ptrace_scope is 1"},
		LandlockABI: 7,
	}
	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	assert.Equal(t, `user namespaces   no    user.max_user_namespaces is 0
landlock          yes   ABI 7
seccomp           yes   filter mode
no_new_privs      yes
cgroup v2         yes   unified hierarchy at /sys/fs/cgroup
ptrace of tools   yes   kernel.yama.ptrace_scope is 1
landlock ABI      7
best level: landlock
`, b.String())
	r.LandlockABI = 3
	b.Reset()
	require.NoError(t, r.WriteText(&b))
	assert.Contains(t, b.String(), "landlock ABI      3\nnetwork: sandbox level landlock with network needs Landlock ABI 4 (Linux 6.7) to keep the tools' TCP to the proxy; this kernel has ABI 3\nbest level: landlock\n")
}
