package escape_test

import (
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/agent/tools"
	"github.com/agentrun/agentrun/sandbox"
)

// TestStrictIsolation checks what level strict adds: its own pid, uts and user
// namespaces. Level landlock shares the host's; the differences are logged.
func TestStrictIsolation(t *testing.T) {
	levels(t, false, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0467"})
		strict := level == sandbox.LevelStrict
		gap := func(ok bool, what string) {
			if strict {
				assert.True(t, ok, "level strict: %s", what)
			} else if !ok {
				t.Logf("GAP at level %s: %s", level, what)
			}
		}
		procs := strings.Fields(fx.bash(t, "ls /proc", 20).Content)
		gap(!slices.Contains(procs, strconv.Itoa(os.Getpid())), "the test process's pid is listed in /proc")
		gap(!slices.Contains(procs, strconv.Itoa(fx.sleeper.Process.Pid)), "the host's sleeper is listed in /proc")
		ps := fx.bash(t, "ps -e -o pid=,args=", 20).Content
		gap(!strings.Contains(ps, fx.sleeperName), "ps shows the host's sleeper")
		if strict {
			n := len(strings.Split(strings.TrimSpace(ps), "\n"))
			assert.LessOrEqual(t, n, 8, "ps inside shows more than the sandbox's own processes:\n%s", ps)
		}
		host, err := os.Hostname()
		require.NoError(t, err)
		name := strings.TrimSpace(fx.bash(t, "hostname", 20).Content)
		if strict {
			assert.Equal(t, sandbox.Hostname, name)
		} else {
			gap(name != host, "the host's name is visible: "+name)
		}
		if strict {
			assert.Equal(t, "0\n", fx.bash(t, "id -u", 20).Content)
		}
		// A root-owned host file outside the workspace: uid 0 inside, still no write.
		if os.Getuid() == 0 {
			fi, err := os.Stat(fx.target)
			require.NoError(t, err)
			require.Equal(t, uint32(0), fi.Sys().(*syscall.Stat_t).Uid)
		}
		before, err := snapshot(fx.target)
		require.NoError(t, err)
		out := fx.bash(t, "id; echo x >> "+fx.target+"; chown 0:0 "+fx.target+"; cp /dev/null "+fx.target, 20)
		after, err := snapshot(fx.target)
		require.NoError(t, err)
		assert.Equal(t, before.content, after.content, "ESCAPE at level %s: uid 0 wrote the root-owned target:\n%s", level, out.Content)
	})
}

// TestClassifierAllowsLegitimateWork runs ordinary work with the classifier on (the
// policy equal to the kernel's mode, 0467): classifier and kernel must both let it
// through, and it must work.
func TestClassifierAllowsLegitimateWork(t *testing.T) {
	levels(t, false, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0467", policy: "0467", allow: []string{"127.0.0.1"}})
		web := hostTCP(t)
		fx.placeholders = append(fx.placeholders, "{PORT}", strconv.Itoa(web.l.Addr().(*net.TCPAddr).Port))
		tests := []struct {
			name, tool, input, want string
		}{
			{"shell write and read", "Bash", "echo hello > a.txt && cat a.txt", "hello\n"},
			{"git commit", "Bash", "git init -q r && cd r && echo a > a && git add a && git -c user.email=a@b.c -c user.name=n commit -qm m && git rev-list --count HEAD", "1\n"},
			{"python writes the workspace", "Bash", `python3 -c "open('p.txt','w').write('py')" && cat p.txt`, "py"},
			{"compile and run", "Bash", "printf 'int main(void){return 0;}' > m.c && gcc -o m m.c && ./m && echo built", "built\n"},
			{"read outside", "Bash", "cat {TARGET}", "outside target: must stay as it is\n"},
			{"tmp is writable", "Bash", `f=$(mktemp) && echo t > "$f" && cat "$f" && rm "$f"`, "t\n"},
			{"allowlisted host through the proxy", "Bash", "curl -sS --max-time 5 --noproxy '' http://127.0.0.1:{PORT}/", "host-reached\n"},
			{"Write tool", "Write", `{"path":"w.txt","content":"one\n"}`, "wrote"},
			{"Edit tool", "Edit", `{"path":"w.txt","old_string":"one","new_string":"two"}`, ""},
			{"Read tool", "Read", `{"path":"w.txt"}`, "two"},
			{"Read tool outside", "Read", `{"path":"{TARGET}"}`, "must stay"},
			{"Glob tool", "Glob", `{"pattern":"*.txt"}`, "w.txt"},
			{"Grep tool", "Grep", `{"pattern":"two","output_mode":"content"}`, "two"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if tc.tool == "Bash" && strings.Contains(tc.input, "gcc") && !installed("gcc") {
					t.Skip("gcc is not installed")
				}
				x := fx.expander(tc.name)
				var r tools.Result
				if tc.tool == "Bash" {
					r = fx.bash(t, x.expand(tc.input), 30)
				} else {
					r = fx.run(t, tc.tool, x.expand(tc.input))
				}
				require.False(t, r.IsError, "%s was refused or failed:\n%s", tc.name, r.Content)
				if tc.tool == "Bash" {
					assert.Equal(t, tc.want, r.Content)
				} else {
					assert.Contains(t, r.Content, tc.want)
				}
			})
		}
		after := web.count(t)
		assert.Equal(t, int64(1), after, "the allowlisted request did not reach the host's server exactly once")
	})
}
