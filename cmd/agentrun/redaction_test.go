package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// secretForms returns s as it would appear raw, escaped in a JSON string (with and
// without HTML escaping, and with / escaped) and escaped in XML.
func secretForms(t *testing.T, s string) []string {
	t.Helper()
	forms := []string{s}
	for _, html := range []bool{false, true} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		require.NoError(t, enc.Encode(s))
		q := strings.TrimSpace(b.String())
		forms = append(forms, q[1:len(q)-1])
	}
	forms = append(forms, strings.ReplaceAll(forms[1], "/", `\/`))
	var x bytes.Buffer
	require.NoError(t, xml.EscapeText(&x, []byte(s)))
	return append(forms, x.String())
}

// scanTree fails the test for every file under root whose name or content holds one
// of the forms of a secret, and returns how many files it read.
func scanTree(t *testing.T, root string, secrets map[string]string) int {
	t.Helper()
	files := 0
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, path)
		for name, secret := range secrets {
			for _, form := range secretForms(t, secret) {
				assert.NotContains(t, rel, form, "%s appears in the file name %s", name, rel)
			}
		}
		if !d.Type().IsRegular() {
			return nil
		}
		files++
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		for name, secret := range secrets {
			for _, form := range secretForms(t, secret) {
				if i := bytes.Index(b, []byte(form)); i >= 0 {
					t.Errorf("%s (as %q) is in %s at byte %d: …%s…", name, form, rel, i,
						b[max(i-40, 0):min(i+len(form)+40, len(b))])
				}
			}
		}
		return nil
	}))
	return files
}

// quoted is s as a YAML (JSON) double-quoted string.
func quoted(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}

// TestNoSecretInAnyFile runs a worktree session that touches every artifact kind
// (streams, transcript, messages, result, summaries, junit.xml with a failing check,
// run.log and changes.patch with the secret in a file's content and in file names),
// then an exec session with a session store, and scans every file under --out and
// $AGENTRUN_HOME for the secrets, raw and JSON- and XML-escaped.
func TestNoSecretInAnyFile(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{
		"token":      `tok<&"'>/\-` + randomHex(t),
		"file token": "ftok-" + randomHex(t),
		"api key":    "sk-ant-" + randomHex(t),
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, "repo")
	writeFile(t, ws, "README.md", "# repo\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"}} {
		out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	// The model (a script the test writes) says the token and the key, and a tool
	// prints the token and writes it into a file named after the file token.
	script := `steps:
  - text: ` + quoted(t, "I have "+secrets["token"]+" and "+secrets["api key"]) + `
    tool_calls:
      - name: Bash
        input: {command: 'echo "token=$E2E_TOKEN key=` + secrets["api key"] + `"; printf "%s\n" "$E2E_TOKEN" > "$E2E_FILE_TOKEN.txt"; mkdir "d-$E2E_FILE_TOKEN"; echo "$E2E_TOKEN" > "d-$E2E_FILE_TOKEN/n"'}
  - text: ` + quoted(t, "Done with "+secrets["token"]) + `
`
	writeFile(t, dir, "steps.yaml", script)
	spec := writeFile(t, dir, "jobs.yaml", `version: 1
defaults:
  provider: scripted
  script: steps.yaml
  tools: [Bash]
  secrets: [E2E_TOKEN, E2E_FILE_TOKEN]
  env: {E2E_TOKEN: "${E2E_TOKEN}", E2E_FILE_TOKEN: "${E2E_FILE_TOKEN}"}
  workspace: {dir: repo, mode: worktree}
jobs:
  - id: leak
    prompt: Use the token.
    checks:
      - {name: leak, run: 'echo "check saw $E2E_TOKEN"; exit 1'}
`)
	env := baseEnv(t, "E2E_TOKEN="+secrets["token"], "E2E_FILE_TOKEN="+secrets["file token"],
		"ANTHROPIC_API_KEY="+secrets["api key"])
	out := filepath.Join(dir, "out")
	o := agentrun(t, invocation{args: []string{"run", spec, "--out", out}, env: env, dir: dir})
	require.Equal(t, 1, o.code, "the check fails; stderr:\n%s", o.stderr)
	for _, name := range []string{"changes.patch", "messages.jsonl", "transcript.txt", "result.json"} {
		b, err := os.ReadFile(filepath.Join(out, "sessions", "leak", name))
		require.NoError(t, err)
		assert.Contains(t, string(b), "***", "%s holds no mask: the session did not do what the test needs", name)
	}
	junit, err := os.ReadFile(filepath.Join(out, "junit.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(junit), "check saw ***")

	// exec, with its session store under $AGENTRUN_HOME.
	execScript := writeFile(t, dir, "exec.yaml", `steps:
  - text: `+quoted(t, "key "+secrets["api key"])+`
    tool_calls:
      - name: Bash
        input: {command: 'echo "`+secrets["api key"]+`"'}
  - text: done
`)
	o = agentrun(t, invocation{args: []string{"exec", "--script", execScript, "--cwd", ws, "Print the key."}, env: env, dir: dir})
	require.Equal(t, 0, o.code, "stderr:\n%s", o.stderr)
	assert.NotContains(t, o.stdout, secrets["api key"])
	home := strings.TrimPrefix(env[2], "AGENTRUN_HOME=")
	require.True(t, strings.HasPrefix(env[2], "AGENTRUN_HOME="))
	messages, err := filepath.Glob(filepath.Join(home, "projects", "*", "*", "messages.jsonl"))
	require.NoError(t, err)
	require.Len(t, messages, 1)
	b, err := os.ReadFile(messages[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), "***")

	assert.Greater(t, scanTree(t, out, secrets), 10)
	assert.Greater(t, scanTree(t, home, secrets), 3)
}
