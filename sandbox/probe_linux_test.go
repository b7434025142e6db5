package sandbox

import (
	"os/exec"
	"strings"
	"testing"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestProbeMatchesMachine checks Probe against independent evidence on this machine.
func TestProbeMatchesMachine(t *testing.T) {
	r := Probe()
	t.Run("user namespaces agree with unshare(1)", func(t *testing.T) {
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("no unshare(1)")
		}
		err := exec.Command("unshare", "-Urmpf", "true").Run()
		assert.Equal(t, err == nil, r.UserNS.OK, "unshare: %v; probe: %+v", err, r.UserNS)
	})
	t.Run("landlock ABI agrees with the kernel", func(t *testing.T) {
		abi, err := llsys.LandlockGetABIVersion()
		assert.Equal(t, err == nil && abi > 0, r.Landlock.OK)
		if err == nil {
			assert.Equal(t, abi, r.LandlockABI)
		}
	})
	t.Run("seccomp and no_new_privs", func(t *testing.T) {
		assert.True(t, r.Seccomp.OK, r.Seccomp.Reason)
		assert.True(t, r.NoNewPrivs.OK, r.NoNewPrivs.Reason)
	})
	t.Run("missing features say why", func(t *testing.T) {
		for _, f := range []Feature{r.UserNS, r.Landlock, r.Seccomp, r.NoNewPrivs, r.CgroupV2} {
			if !f.OK {
				assert.NotEmpty(t, f.Reason)
			}
		}
	})
	t.Run("best level is supported", func(t *testing.T) {
		assert.NoError(t, r.Supports(r.Best()))
		assert.NoError(t, r.Supports(LevelOff))
	})
	t.Run("text", func(t *testing.T) {
		var b strings.Builder
		require.NoError(t, r.WriteText(&b))
		assert.True(t, strings.HasSuffix(b.String(), "best level: "+string(r.Best())+"\n"), b.String())
		t.Log("\n" + b.String())
	})
}

// TestProbeDoesNotChangeTheProcess checks Probe leaves the caller's seccomp and
// no_new_privs state alone.
func TestProbeDoesNotChangeTheProcess(t *testing.T) {
	before := []string{procStatus("Seccomp"), procStatus("NoNewPrivs"), procStatus("CapEff")}
	Probe()
	assert.Equal(t, before, []string{procStatus("Seccomp"), procStatus("NoNewPrivs"), procStatus("CapEff")})
}

func TestPtraceFeature(t *testing.T) {
	for name, tc := range map[string]struct {
		scope int
		ok    bool
		why   string
	}{
		"no yama":     {-1, true, "no Yama"},
		"classic":     {0, true, "kernel.yama.ptrace_scope is 0"},
		"descendants": {1, true, "kernel.yama.ptrace_scope is 1"},
		"none":        {3, false, "kernel.yama.ptrace_scope is 3: no process may attach"},
	} {
		t.Run(name, func(t *testing.T) {
			f := ptraceFeature(tc.scope)
			assert.Equal(t, tc.ok, f.OK)
			assert.Equal(t, tc.why, f.Reason)
		})
	}
	ok, err := haveEffective(unix.CAP_SYS_PTRACE)
	require.NoError(t, err)
	assert.Equal(t, ok, ptraceFeature(2).OK, "scope 2 takes CAP_SYS_PTRACE")
}
