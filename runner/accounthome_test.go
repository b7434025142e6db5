package runner_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
)

// TestAccountHomesStoresAreHidden: where $HOME is not the home of the account agentrun
// runs as (unset, as a system service or `env -i` starts it, or a folder of the CI
// system's, as a container job sets it), the credential stores in the account's home
// are hidden as those in $HOME are, at both levels: the tools read neither the cloud
// credentials' bytes, nor the exports of the shell's startup file, nor the token of its
// git config. (They read all three.)
func TestAccountHomesStoresAreHidden(t *testing.T) {
	t.Parallel()
	confinedLevels(t, func(t *testing.T, level sandbox.Level, dir string) {
		// The account's home is where homes are, and open to all, as many are (a root
		// runner hides root-only folders whole; the sandbox shows /home, not /tmp).
		account, err := os.MkdirTemp("/home", "agentrun-account-")
		if err != nil {
			t.Skipf("no folder of its own in /home: %v", err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(account) })
		require.NoError(t, os.Chmod(account, 0o755))
		elsewhere, ws := filepath.Join(dir, "ci-home"), filepath.Join(dir, "ws")
		for _, d := range []string{filepath.Join(account, ".aws"), elsewhere, ws} {
			require.NoError(t, os.MkdirAll(d, 0o755))
		}
		creds, rc, gitconfig := filepath.Join(account, ".aws", "credentials"), filepath.Join(account, ".bashrc"), filepath.Join(account, ".gitconfig")
		require.NoError(t, os.WriteFile(creds, []byte("aws_secret_access_key = ACCOUNT-SECRET\n"), 0o644))
		require.NoError(t, os.WriteFile(rc, []byte("export TOKEN=BASHRC-SECRET\n"), 0o644))
		require.NoError(t, os.WriteFile(gitconfig, []byte("[url \"https://x-access-token:GITCONFIG-SECRET@github.com/\"]\n\tinsteadOf = https://github.com/\n"), 0o644))
		// The paths reach the shell encoded, past the bash policy's reading of the
		// command: the kernel's rules are what this checks.
		var encoded []string
		for _, p := range []string{creds, rc, gitconfig} {
			encoded = append(encoded, base64.StdEncoding.EncodeToString([]byte(p)))
		}
		cmd := fmt.Sprintf("for p in %s; do cat $(echo $p | base64 -d); done; echo done", strings.Join(encoded, " "))
		_, out, output := runBashWith(t, dir, fmt.Sprintf("sandbox: {level: %s}, workspace: {dir: %q, mode: shared}", level, ws), cmd,
			runner.Options{Home: elsewhere, AccountHome: account, Environ: []string{"PATH=/usr/bin:/bin", "HOME=" + elsewhere}})
		assert.NotContains(t, output, "ACCOUNT-SECRET", "LEAK at level %s", level)
		assert.NotContains(t, output, "BASHRC-SECRET", "LEAK at level %s", level)
		assert.NotContains(t, output, "GITCONFIG-SECRET", "LEAK at level %s", level)
		stream, err := os.ReadFile(filepath.Join(out, runner.SessionsDir, "agent", runner.StreamFile))
		require.NoError(t, err)
		assert.False(t, strings.Contains(string(stream), "SECRET"), "a secret in stream.jsonl at level %s", level)
	})
}
