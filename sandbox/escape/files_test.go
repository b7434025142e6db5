package escape_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
)

// landlockMetadata is why level landlock cannot hold metadata changes: Landlock (ABI 7)
// has no access right for chmod, chown, utimes or extended attributes, and the worker's
// uid owns the file.
const landlockMetadata = "Landlock has no right for chmod/utimes/xattrs: the owner may change metadata of any file it can name"

// preloadC is a library whose constructor proves it ran and writes outside.
const preloadC = `cat > preload.c <<'EOF'
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void init(void) {
	close(open("{RAN}", O_CREAT | O_WRONLY, 0644));
	close(open("{OUT}", O_CREAT | O_WRONLY, 0644));
}
EOF
gcc -shared -fPIC -o preload-{NAME}.so preload.c && LD_PRELOAD=./preload-{NAME}.so /bin/true`

// writeAttempts write outside the workspace at bash_mode 0467 (outside/ and $HOME are
// readable, not writable).
var writeAttempts = []attempt{
	{name: "touch /etc", cmd: "touch {ETCX}", effect: absent("{ETCX}"), strict: true, landlock: true},
	{name: "touch /usr", cmd: "touch {USRX}", effect: absent("{USRX}"), strict: true, landlock: true},
	{name: "touch outside", cmd: "touch {OUT}", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "touch home", cmd: "touch ~/{NAME}", effect: absent("{HOME}/{NAME}"), strict: true, landlock: true, off: true},
	{name: "pipe into bash", cmd: "echo 'touch {OUT}' | bash", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "base64 into bash", cmd: "echo '{B64}' | base64 -d | bash", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "xargs touch", cmd: "echo {OUT} | xargs touch", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "git alias", needs: "git", cmd: "git init -q g-{NAME} && cd g-{NAME} && git -c alias.x='!touch {RAN}; touch {OUT}' x",
		effect: ran(absent("{OUT}")), strict: true, landlock: true, off: true},
	{name: "git fsmonitor", needs: "git",
		cmd:    "git init -q f-{NAME} && cd f-{NAME} && echo a > a && git add a && git -c core.fsmonitor='touch {RAN}; touch {OUT}; false' status",
		effect: ran(absent("{OUT}")), strict: true, landlock: true, off: true},
	{name: "CDPATH cd etc", cmd: "CDPATH=/; cd etc && touch {NAME}", effect: absent("{ETCX}"), strict: true, landlock: true},
	{name: "sort -o", cmd: "sort -o {OUT} /dev/null", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "uniq output file", cmd: "uniq /dev/null {OUT}", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "sqlite3 database", needs: "sqlite3", cmd: "sqlite3 {OUT} 'create table t(a)'", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "ed write", needs: "ed", cmd: `printf 'a\nx\n.\nw {OUT}\nq\n' | ed -s`, effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "python open", needs: "python3", cmd: `python3 -c "open('{OUT}','w').write('x')"`, effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "perl open", needs: "perl", cmd: `perl -e 'open F, ">{OUT}" or die "$!"'`, effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "awk redirect", cmd: `awk 'BEGIN { print "x" > "{OUT}" }'`, effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "variable path", cmd: "d=/etc; touch $d/{NAME}", effect: absent("{ETCX}"), strict: true, landlock: true},
	{name: "command substitution", cmd: "$(echo touch) {OUT}; eval 'touch {OUT}'; bash -c 'touch {OUT}'", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "cp binary", cmd: "cp /bin/true {OUT}", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "install -D", cmd: "install -D /dev/null {OUT}/x", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "tee", cmd: "tee {OUT} </dev/null", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "dd of", cmd: "dd if=/dev/zero of={OUT} bs=1 count=1", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "exec fd redirect", cmd: "exec 3>{OUT}; echo x >&3", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "mkdir outside", cmd: "mkdir {OUT}", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "mv workspace file out", cmd: "echo x > m-{NAME} && mv m-{NAME} {OUT}", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "tar extract outside", cmd: "echo x > t-{NAME} && tar cf t-{NAME}.tar t-{NAME} && tar xf t-{NAME}.tar -C {OUTDIR}",
		effect: absent("{OUTDIR}/t-{NAME}"), strict: true, landlock: true, off: true},
	{name: "find -exec", cmd: `find . -maxdepth 0 -exec touch {OUT} \;`, effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "parent directory", cmd: "cd .. && touch {NAME}", effect: absent("{ROOT}/{NAME}"), strict: true, landlock: true, off: true},
	{name: "proc self cwd", cmd: "touch /proc/self/cwd/../outside/{NAME}", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "symlink then write", cmd: "ln -s {OUT} l-{NAME} && echo x > l-{NAME}", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "directory symlink", cmd: "ln -s {OUTDIR} d-{NAME} && touch d-{NAME}/{NAME}", effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "LD_PRELOAD constructor", needs: "gcc", cmd: preloadC, effect: ran(absent("{OUT}")), strict: true, landlock: true, off: true},
	{name: "truncate target", cmd: "truncate -s 0 {TARGET}", effect: unchanged("{TARGET}"), strict: true, landlock: true, off: true},
	{name: "append to target", cmd: "echo x >> {TARGET}", effect: unchanged("{TARGET}"), strict: true, landlock: true, off: true},
	{name: "sed -i target", cmd: "sed -i s/must/may/ {TARGET}", effect: unchanged("{TARGET}"), strict: true, landlock: true, off: true},
	{name: "rm target", cmd: "rm -f {TARGET}", effect: unchanged("{TARGET}"), strict: true, landlock: true, off: true},
	{name: "mv target into workspace", cmd: "mv {TARGET} stolen-{NAME}", effect: unchanged("{TARGET}"), strict: true, landlock: true, off: true},
	{name: "chmod target", cmd: "chmod 0777 {TARGET}", effect: unchanged("{TARGET}"), strict: true, gap: landlockMetadata, off: true},
	{name: "touch -d target", cmd: "touch -d @0 {TARGET}", effect: unchanged("{TARGET}"), strict: true, gap: landlockMetadata, off: true},
	{name: "setxattr target", needs: "python3", cmd: `python3 -c "import os; os.setxattr('{TARGET}', 'user.escape', b'x')"`,
		effect: unchanged("{TARGET}"), strict: true, gap: landlockMetadata, off: true},
	{name: "host tmp", cmd: "touch {TMPX}", effect: absent("{TMPX}"), strict: true, landlock: true},
	{name: "host dev shm", cmd: "touch {SHMX}", effect: absent("{SHMX}"), strict: true, landlock: true},
	{name: "core_pattern", cmd: "echo '|/bin/touch {OUT}' > /proc/sys/kernel/core_pattern", effect: unchangedHostFile("/proc/sys/kernel/core_pattern"),
		strict: true, landlock: true},
	{name: "mknod disk", cmd: "mknod disk-{NAME} b 8 0 && touch {RAN}", effect: absent("{WS}/disk-{NAME}"), strict: true, landlock: true},
	{name: "Write tool outside", tool: "Write", cmd: `{"path":"{OUT}","content":"x"}`, effect: absent("{OUT}"), strict: true, landlock: true, off: true},
	{name: "Write tool etc", tool: "Write", cmd: `{"path":"{ETCX}","content":"x"}`, effect: absent("{ETCX}"), strict: true, landlock: true},
	{name: "Write tool target", tool: "Write", cmd: `{"path":"{TARGET}","content":"x"}`, effect: unchanged("{TARGET}"), strict: true, landlock: true, off: true},
	{name: "Edit tool target", tool: "Edit", cmd: `{"path":"{TARGET}","old_string":"must","new_string":"may"}`, effect: unchanged("{TARGET}"), strict: true, landlock: true, off: true},
	{name: "Write tool home", tool: "Write", cmd: `{"path":"{HOME}/{NAME}","content":"x"}`, effect: absent("{HOME}/{NAME}"), strict: true, landlock: true, off: true},
}

func TestWritesOutside(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every write scenario in a sandbox (not with -short)")
	}
	levels(t, true, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0467"})
		runTable(t, fx, writeAttempts)
		if level != sandbox.LevelOff {
			fx.assertTargetIntact(t)
		}
	})
}

// readOnlyAttempts write into a read-only workspace (bash_mode 0004), which also has no
// execute bit and no external scope.
var readOnlyAttempts = []attempt{
	{name: "echo redirect", cmd: "echo x > ro.txt", effect: unchanged("{WS}/ro.txt"), strict: true, landlock: true, off: true},
	{name: "sort -o", cmd: "sort -o ro.txt /dev/null", effect: unchanged("{WS}/ro.txt"), strict: true, landlock: true, off: true},
	{name: "touch new", cmd: "touch new-{NAME}", effect: absent("{WS}/new-{NAME}"), strict: true, landlock: true, off: true},
	{name: "rm", cmd: "rm -f ro.txt", effect: unchanged("{WS}/ro.txt"), strict: true, landlock: true, off: true},
	{name: "python truncate", needs: "python3", cmd: `python3 -c "open('ro.txt','w')"`, effect: unchanged("{WS}/ro.txt"), strict: true, landlock: true, off: true},
	{name: "chmod", cmd: "chmod 0 ro.txt", effect: unchanged("{WS}/ro.txt"), strict: true, gap: landlockMetadata, off: true},
	{name: "Write tool", tool: "Write", cmd: `{"path":"ro.txt","content":"x"}`, effect: unchanged("{WS}/ro.txt"), strict: true, landlock: true, off: true},
	{name: "Edit tool", tool: "Edit", cmd: `{"path":"ro.txt","old_string":"read","new_string":"write"}`, effect: unchanged("{WS}/ro.txt"), strict: true, landlock: true, off: true},
	{name: "Write tool new file", tool: "Write", cmd: `{"path":"new-{NAME}","content":"x"}`, effect: absent("{WS}/new-{NAME}"), strict: true, landlock: true, off: true},
	{name: "exec workspace script", cmd: "./run.sh", effect: hidden("EXECUTED-{SALT}"), strict: true, landlock: true, off: true},
	{name: "exec through ld.so", cmd: "/lib64/ld-linux-x86-64.so.2 ./id", effect: hidden("uid="), strict: true,
		gap: "Landlock's execute right covers execve, not mmap(PROT_EXEC) by the dynamic loader", off: true},
	{name: "home without external read", cmd: "cat ~/notes.txt; ls -a ~", effect: hidden("{NOTES}"), strict: true, landlock: true, off: true},
}

func TestReadOnlyWorkspace(t *testing.T) {
	levels(t, true, func(t *testing.T, level sandbox.Level) {
		fx := newFixture(t, level, options{mode: "0004"})
		salt := randomHex(6)
		fx.placeholders = append(fx.placeholders, "{SALT}", salt, "{NOTES}", fx.notes)
		writeFile(t, filepath.Join(fx.ws, "ro.txt"), "read only\n")
		require.NoError(t, os.WriteFile(filepath.Join(fx.ws, "run.sh"), []byte("#!/bin/sh\necho EXECUTED-"+salt+"\n"), 0o755))
		id, err := os.ReadFile("/usr/bin/id")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(fx.ws, "id"), id, 0o755))
		runTable(t, fx, readOnlyAttempts)
	})
}

// unchangedHostFile: a host file outside every test folder (a sysctl) must keep its
// content; it is restored if not.
func unchangedHostFile(p string) effect {
	return func(t *testing.T, fx *fixture, x *expander) func(string) (bool, string) {
		before, err := os.ReadFile(p)
		require.NoError(t, err)
		return func(string) (bool, string) {
			after, err := os.ReadFile(p)
			if err == nil && string(after) == string(before) {
				return true, ""
			}
			require.NoError(t, os.WriteFile(p, before, 0o644), "restore %s", p)
			return false, fmt.Sprintf("changed %s from %q to %q", p, before, after)
		}
	}
}

// assertTargetIntact checks that outside/ holds target.txt alone, as it was made.
func (fx *fixture) assertTargetIntact(t *testing.T) {
	t.Helper()
	got, err := os.ReadFile(fx.target)
	require.NoError(t, err)
	require.Equal(t, "outside target: must stay as it is\n", string(got))
}
