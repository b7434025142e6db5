package jobs

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inJob makes a spec of one job whose last line is line, the line every case below
// counts columns in (line 5).
func inJob(line string) string {
	return doc("version: 1", "jobs:", "  - id: a", "    prompt: hi", line)
}

func TestParseInvalidSandbox(t *testing.T) {
	testInvalid(t, []invalidCase{
		{
			name:     "unknown level with suggestion",
			give:     doc("version: 1", "defaults:", "  sandbox: {level: strct}", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 20, wantField: "defaults.sandbox.level",
			wantMsg: `unknown sandbox level "strct" (did you mean "strict"?); want one of strict, landlock, off`,
		},
		{
			name:     "empty level",
			give:     inJob(`    sandbox: {level: ""}`),
			wantLine: 5, wantCol: 22, wantField: "jobs[0].sandbox.level", wantMsg: `unknown sandbox level ""; want one of strict, landlock, off`,
		},
		{
			name:     "level as a boolean",
			give:     inJob("    sandbox: {level: false}"),
			wantLine: 5, wantCol: 22, wantField: "jobs[0].sandbox.level", wantMsg: "want a string, got the boolean false",
		},
		{
			name:     "sandbox without value",
			give:     inJob("    sandbox:"),
			wantLine: 5, wantCol: 13, wantField: "jobs[0].sandbox", wantMsg: "no value",
		},
		{
			name:     "unknown key in sandbox",
			give:     inJob("    sandbox: {writeable: [/x]}"),
			wantLine: 5, wantCol: 15, wantField: "jobs[0].sandbox.writeable", wantMsg: `unknown key "writeable"; did you mean "writable"?`,
		},
		{
			name:     "writable not a list",
			give:     inJob("    sandbox: {writable: /tmp/x}"),
			wantLine: 5, wantCol: 25, wantField: "jobs[0].sandbox.writable", wantMsg: `want a list, got the string "/tmp/x"`,
		},
		{
			name:     "empty path",
			give:     inJob(`    sandbox: {writable: [""]}`),
			wantLine: 5, wantCol: 26, wantField: "jobs[0].sandbox.writable[0]", wantMsg: "empty path",
		},
		{
			name:     "path with a NUL byte",
			give:     inJob(`    sandbox: {readable: ["a\0b"]}`),
			wantLine: 5, wantCol: 26, wantField: "jobs[0].sandbox.readable[0]", wantMsg: `path "a\x00b" contains a NUL byte`,
		},
		{
			name:     "path of another user's home",
			give:     inJob("    sandbox: {writable: [~/ok, ~bob/x]}"),
			wantLine: 5, wantCol: 32, wantField: "jobs[0].sandbox.writable[1]", wantMsg: `path "~bob/x": ~user is not supported; write ~/… for the home directory`,
		},
		{
			name:     "home directory without quotes",
			give:     inJob("    sandbox: {readable: [~]}"),
			wantLine: 5, wantCol: 26, wantField: "jobs[0].sandbox.readable[0]", wantMsg: `~ alone is null in YAML: write "~" in quotes for the home directory`,
		},
		{
			name:     "duplicate path",
			give:     inJob("    sandbox: {writable: [/tmp/a, /tmp//a/]}"),
			wantLine: 5, wantCol: 34, wantField: "jobs[0].sandbox.writable[1]", wantMsg: `duplicate path "/tmp//a/" (first at 5:26)`,
		},
		{
			name:     "duplicate relative path",
			give:     doc("version: 1", "defaults:", "  sandbox: {readable: [data, ./data]}", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 30, wantField: "defaults.sandbox.readable[1]", wantMsg: `duplicate path "./data" (first at 3:24)`,
		},
		{
			name:     "path from a variable hides its value",
			give:     inJob("    sandbox: {writable: ['${P}']}"),
			env:      map[string]string{"P": "~s3cr3t"},
			wantLine: 5, wantCol: 26, wantField: "jobs[0].sandbox.writable[0]", wantMsg: `path value: ~user is not supported; write ~/… for the home directory, or an absolute path (from "${P}")`,
		},
		{
			name:     "matrix overrides a sandbox list",
			give:     inJob("    matrix: {sandbox.writable: [/x]}"),
			wantLine: 5, wantCol: 32, wantField: "jobs[0].matrix.sandbox.writable", wantMsg: "is a setting that takes a list; a matrix can only override single-value settings",
		},
		{
			name:     "matrix sandbox level that is not one",
			give:     inJob("    matrix: {sandbox.level: [strict, tight]}"),
			wantLine: 5, wantCol: 38, wantField: "jobs[0].matrix.sandbox.level[1]", wantMsg: `unknown sandbox level "tight"`,
		},
	})
}

func TestParseInvalidNetwork(t *testing.T) {
	const msg = `: want a host name, "*.domain", ".domain" or an IP address`
	// Every entry is at 5:23 of `    network: {allow: [ENTRY]}`.
	hosts := []struct{ name, entry, wantMsg string }{
		{"URL", `"http://x"`, `"http://x" is a URL: give the host name alone`},
		{"URL with a path", "https://api.github.com/repos", "is a URL"},
		{"space", `"a b"`, `invalid host "a b"` + msg},
		{"lone wildcard", `"*"`, `"*" would allow every host: leave network.allow out for that, or write "*.domain"`},
		{"wildcard inside a label", "exa*mple.com", `invalid host "exa*mple.com"` + msg},
		{"wildcard not first", `"api.*.com"`, `invalid host "api.*.com"`},
		{"double wildcard", `"*.*.example.com"`, `invalid host "*.*.example.com"`},
		{"wildcard without domain", `"*."`, `invalid host "*."`},
		{"host with port", `"host:443"`, `"host:443" has a port, but ports are not filtered: give the host without it`},
		{"IPv4 with port", `"10.0.0.1:8080"`, "ports are not filtered"},
		{"IPv6 with port", `"[::1]:443"`, "ports are not filtered"},
		{"bracketed IPv6", `"[::1]"`, `invalid host "[::1]"`},
		{"IPv6 with zone", `"fe80::1%eth0"`, `invalid host "fe80::1%eth0"`},
		{"bad IPv4", "10.0.0.256", `invalid host "10.0.0.256"`},
		{"CIDR range", "10.0.0.0/8", `invalid host "10.0.0.0/8"`},
		{"empty label", "a..b", `invalid host "a..b"`},
		{"trailing dot", "example.com.", `invalid host "example.com."`},
		{"label starting with a dash", "-a.example", `invalid host "-a.example"`},
		{"underscore", "a_b.example", `invalid host "a_b.example"`},
		{"empty", `""`, "empty host"},
		{"number", "443", "want a string, got the integer 443"},
	}
	tests := make([]invalidCase, 0, len(hosts)+3)
	for _, h := range hosts {
		tests = append(tests, invalidCase{
			name: h.name, give: inJob("    network: {allow: [" + h.entry + "]}"),
			wantLine: 5, wantCol: 23, wantField: "jobs[0].network.allow[0]", wantMsg: h.wantMsg,
		})
	}
	tests = append(tests,
		invalidCase{
			name:     "duplicate host in another case",
			give:     doc("version: 1", "defaults:", "  network: {allow: [a.example, A.Example]}", "jobs:", "  - id: a", "    prompt: hi"),
			wantLine: 3, wantCol: 32, wantField: "defaults.network.allow[1]", wantMsg: `duplicate host "A.Example" (first at 3:21)`,
		},
		invalidCase{
			name:     "host from a variable hides its value",
			give:     inJob("    network: {allow: ['${H}']}"),
			env:      map[string]string{"H": "s3cr3t.example:443"},
			wantLine: 5, wantCol: 23, wantField: "jobs[0].network.allow[0]", wantMsg: `value has a port, but ports are not filtered: give the host without it (from "${H}")`,
		},
		invalidCase{
			name:     "matrix overrides the allow list",
			give:     inJob("    matrix: {network.allow: [x.example]}"),
			wantLine: 5, wantCol: 29, wantField: "jobs[0].matrix.network.allow", wantMsg: "takes a list",
		},
	)
	testInvalid(t, tests)
}

// TestSandboxValuesParseAndMatchTheSchema checks that Parse accepts the forms of paths
// and hosts it documents, and that the schema, which is looser, accepts them too.
func TestSandboxValuesParseAndMatchTheSchema(t *testing.T) {
	hosts := []string{
		"api.github.com", "*.githubusercontent.com", ".golang.org", "localhost", "10.0.0.1",
		"::1", "2001:db8::1", "::ffff:10.0.0.1", "xn--bcher-kva.example", "API.Example.com", "a-b.c0", "${HOST}",
	}
	paths := []string{"~", "~/.cache/go-build", "/var/tmp/x", "rel/dir", "../up", ".", "${TMP}/x", "with space", "~/"}
	quote := func(list []string) string {
		q := make([]string, len(list))
		for i, e := range list {
			q[i] = strconv.Quote(e)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	give := doc(
		"version: 1",
		"defaults:",
		"  sandbox: {level: landlock, writable: "+quote(paths)+", readable: "+quote(paths[:1])+"}",
		"  network: {allow: "+quote(hosts)+"}",
		"jobs:",
		"  - id: a",
		"    prompt: hi",
	)
	s := parseOK(t, t.TempDir(), give, map[string]string{"HOST": "h.example", "TMP": "/tmp"})
	se := sessionsOK(t, s)
	require.Len(t, se, 1)
	assert.Len(t, se[0].Settings.Network.Allow, len(hosts))
	assert.Len(t, se[0].Settings.Sandbox.Writable, len(paths))

	v, ok := yamlValue(t, []byte(give))
	require.True(t, ok)
	assert.NoError(t, specSchema(t).Validate(v))
}
