package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func init() {
	childScenarios["caps"] = func() int {
		if err := DropCapabilities(); err != nil {
			report("drop", err)
			return 1
		}
		report("drop", "ok")
		for _, f := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
			report("threads_"+f, allTasks(f, "0000000000000000"))
		}
		bits, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
		report("securebits", bits == lockedSecurebits && err == nil)
		out, err := exec.Command("cat", "/proc/self/status").Output()
		if err != nil {
			report("cat", err)
			return 1
		}
		report("child_CapEff", fieldOf(string(out), "CapEff"))
		report("child_CapBnd", fieldOf(string(out), "CapBnd"))
		// Root without CAP_DAC_OVERRIDE cannot read another user's private file.
		_, err = os.ReadFile(filepath.Join(os.Getenv("SANDBOX_TEST_DIR"), "secret"))
		report("read_root_only_file", errnoOf(err))
		return 0
	}
	childScenarios["nnp"] = func() int {
		if err := SetNoNewPrivs(); err != nil {
			report("nnp", err)
			return 1
		}
		if err := SetNotDumpable(); err != nil {
			report("dumpable", err)
			return 1
		}
		report("threads_no_new_privs", allTasks("NoNewPrivs", "1"))
		d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		report("dumpable", d == 0 && err == nil)
		out, _ := exec.Command("cat", "/proc/self/status").Output()
		report("child_no_new_privs", fieldOf(string(out), "NoNewPrivs"))
		return 0
	}
}

// errnoOf names the errno in err, "ok" for nil.
func errnoOf(err error) string {
	if err == nil {
		return "ok"
	}
	return errResult(err)
}

func TestDropCapabilities(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("checking that capabilities go needs them first: run as root")
	}
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("x"), 0o600))
	require.NoError(t, os.Chown(secret, nprocUID, nprocUID))
	got := runChild(t, "caps", "SANDBOX_TEST_DIR="+dir)
	require.Equal(t, "ok", got["drop"])
	for _, tc := range []struct {
		name, key, want string
	}{
		{"inheritable on every thread", "threads_CapInh", "yes"},
		{"permitted on every thread", "threads_CapPrm", "yes"},
		{"effective on every thread", "threads_CapEff", "yes"},
		{"bounding on every thread", "threads_CapBnd", "yes"},
		{"ambient on every thread", "threads_CapAmb", "yes"},
		{"securebits locked", "securebits", "true"},
		{"a child has no effective caps", "child_CapEff", "0000000000000000"},
		{"a child has no bounding caps", "child_CapBnd", "0000000000000000"},
		{"another user's private file refused", "read_root_only_file", "EACCES"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, got[tc.key])
		})
	}
}

func TestSetNoNewPrivsAndNotDumpable(t *testing.T) {
	got := runChild(t, "nnp")
	assert.Equal(t, "yes", got["threads_no_new_privs"])
	assert.Equal(t, "true", got["dumpable"])
	assert.Equal(t, "1", strings.TrimSpace(got["child_no_new_privs"]))
}
