package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/fuzzguard"
)

func TestJavaProperty(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		give, key, want string
		found           bool
	}{
		"plain":                      {"a=1\nagent.home.dir=/opt/agent\n", "agent.home.dir", "/opt/agent", true},
		"colon and spaces":           {"  agent.home.dir : /opt/agent\n", "agent.home.dir", "/opt/agent", true},
		"white space alone":          {"agent.home.dir\t/opt/agent", "agent.home.dir", "/opt/agent", true},
		"the last setting counts":    {"k=1\r\nk=2\rk=3\n", "k", "3", true},
		"escaped separators":         {"C\\:\\\\x\\=y=\\ lead\\:ing\n", "C:\\x=y", " lead:ing", true},
		"a continued line":           {"k=/opt/\\\n    build\\\r\n\tAgent\n", "k", "/opt/buildAgent", true},
		"an escaped backslash ends":  {"k=a\\\\\nb=2\n", "k", "a\\", true},
		"a comment does not go on":   {"# k=1 \\\nk=2\n! k=3\n", "k", "2", true},
		"commented out":              {"#k=1\n  !k=2\n", "k", "", false},
		"unicode escapes":            {"k=/home/J\\u00fcrgen/\\ud83d\\ude00\n", "k", "/home/Jürgen/😀", true},
		"control escapes":            {"k=\\t\\n\\r\\f\\q\n", "k", "\t\n\r\fq", true},
		"a malformed escape":         {"k=1\nk=\\u12g4\n", "k", "1", true},
		"a cut escape":               {"k=\\u12", "k", "", false},
		"no value":                   {"k\n", "k", "", true},
		"an empty key":               {"=v\n", "", "v", true},
		"a backslash at the end":     {"k=v\\", "k", "v", true},
		"blank lines and white only": {"\n\n   \n\t\f\nk=v", "k", "v", true},
		"missing":                    {"a=1\n", "k", "", false},
	} {
		t.Run(name, func(t *testing.T) {
			got, found := javaProperty([]byte(c.give), c.key)
			assert.Equal(t, c.found, found)
			assert.Equal(t, c.want, got)
		})
	}
}

// TestTeamcityState: the build's temporary folder's entries but agentrun's, and the
// agent's config in the home its build's properties name, or two folders up.
func TestTeamcityState(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tmp := filepath.Join(dir, "temp", "buildTmp")
	props := filepath.Join(tmp, "teamcity.build1.properties")
	for name, content := range map[string]string{"teamcity.build1.properties": "agent.home.dir=/opt/tc\\ agent\n",
		"teamcity.config1.properties": "", "agentrun/agentrun-worker": ""} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(tmp, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(tmp, name), []byte(content), 0o600))
	}
	assert.ElementsMatch(t, []string{props, filepath.Join(tmp, "teamcity.config1.properties"), "/opt/tc agent/conf/buildAgent.properties"},
		teamcityState(props, filepath.Join(tmp, "agentrun", "agentrun-worker")))
	require.NoError(t, os.WriteFile(props, []byte("agent.home.dir=relative\n"), 0o600))
	assert.Contains(t, teamcityState(props, ""), filepath.Join(dir, "conf", "buildAgent.properties"))
	assert.Empty(t, teamcityState("relative/teamcity.build1.properties", ""))
	assert.Contains(t, ciState([]string{"TEAMCITY_VERSION=2025.07", "TEAMCITY_BUILD_PROPERTIES_FILE=" + props}, "", -1), props)
	assert.Empty(t, ciState([]string{"TEAMCITY_BUILD_PROPERTIES_FILE=" + props}, "", -1))
}

// FuzzJavaProperty: whatever precedes it, a key and value written as Java's
// Properties.store writes them read back as they were; and no input panics.
func FuzzJavaProperty(f *testing.F) {
	f.Add([]byte("a=1\n"), "agent.home.dir", "/opt/agent")
	f.Fuzz(func(t *testing.T, before []byte, key, value string) {
		fuzzguard.Run(len(before)+len(key)+len(value), func() {
			_, _ = javaProperty(before, key)
			if !utf8.ValidString(key) || !utf8.ValidString(value) {
				return
			}
			doc := fmt.Sprintf("%s\n\n\n%s=%s\n", before, storeEscape(key, true), storeEscape(value, false))
			got, found := javaProperty([]byte(doc), key)
			assert.True(t, found, "%q", doc)
			assert.Equal(t, value, got, "%q", doc)
		})
	})
}

// storeEscape escapes s as Java's Properties.store does a key (every space) or a
// value (a leading space).
func storeEscape(s string, key bool) string {
	var b strings.Builder
	for i, r := range []rune(s) {
		switch {
		case r == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case strings.ContainsRune(`=:#!\`, r):
			b.WriteString(`\` + string(r))
		case r < 0x20 || r > 0x7e:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04X`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
