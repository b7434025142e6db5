package runner_test

import (
	"context"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
)

// mixedJUnit runs the mixed spec (a session of every outcome) in-process and returns
// its junit.xml and the spec's path.
func mixedJUnit(t *testing.T) ([]byte, string) {
	t.Helper()
	spec := writeSpec(t, t.TempDir(), mixedSpec(false))
	out := filepath.Join(t.TempDir(), "out")
	p := newInProcess(loadScripts(t))
	p.fakes["crash"] = panicking("provider exploded")
	_, err := newRunner(t, mixedOptions(out, p)).Run(context.Background(), spec)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(out, runner.JUnitFile))
	require.NoError(t, err)
	return b, spec.File()
}

// xmlNode is a generic element, to check the document's structure.
type xmlNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []xmlNode  `xml:",any"`
}

func (n xmlNode) attr(name string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

func (n xmlNode) attrNames() []string {
	var names []string
	for _, a := range n.Attrs {
		names = append(names, a.Name.Local)
	}
	return names
}

// TestJUnitStructure checks the shape that Surefire's and Jenkins' schemas and the
// report actions need: testsuites with name, tests, failures, errors and time only; one
// suite whose properties are the only properties; each testcase with file (the spec)
// and line (its job's line), and children only among failure, error, skipped and
// system-out.
func TestJUnitStructure(t *testing.T) {
	t.Parallel()
	doc, specPath := mixedJUnit(t)
	specLines := strings.Split(string(must(os.ReadFile(specPath))), "\n")
	var root xmlNode
	require.NoError(t, xml.Unmarshal(doc, &root))
	assert.Equal(t, "testsuites", root.XMLName.Local)
	assert.ElementsMatch(t, []string{"name", "tests", "failures", "errors", "time"}, root.attrNames())
	require.Len(t, root.Nodes, 1)
	suite := root.Nodes[0]
	assert.ElementsMatch(t, []string{"name", "tests", "failures", "errors", "skipped", "time"}, suite.attrNames())
	cases := 0
	for _, n := range suite.Nodes {
		switch n.XMLName.Local {
		case "properties":
		case "testcase":
			cases++
			file, _ := n.attr("file")
			assert.Equal(t, specPath, file)
			line, ok := n.attr("line")
			require.True(t, ok, "testcase %v has a line", n.Attrs)
			class, _ := n.attr("classname")
			no, err := strconv.Atoi(line)
			require.NoError(t, err)
			require.Greater(t, no, 0)
			assert.Contains(t, specLines[no-1], "id: "+class, "line %d is the job's entry", no)
			for _, c := range n.Nodes {
				assert.Contains(t, []string{"failure", "error", "skipped", "system-out"}, c.XMLName.Local)
			}
		default:
			t.Errorf("unexpected suite child %s", n.XMLName.Local)
		}
	}
	tests, _ := suite.attr("tests")
	assert.Equal(t, tests, strconv.Itoa(cases))
}

// TestJUnitSchemas validates junit.xml with xmllint: the whole document against the
// Jenkins xunit plugin's junit-10.xsd, and its testsuite against Maven Surefire's
// surefire-test-report-3.0.xsd (Surefire's reports have the suite as their root). The
// testcase's file and line attributes, which neither schema declares and which the
// GitHub report actions read, are the one thing taken out first. Without xmllint the
// test skips, unless AGENTRUN_REQUIRE_TOOLS is set (as .ci/run does).
func TestJUnitSchemas(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("xmllint"); err != nil {
		if os.Getenv("AGENTRUN_REQUIRE_TOOLS") != "" {
			t.Fatal("xmllint is not installed (apt-get install libxml2-utils) and AGENTRUN_REQUIRE_TOOLS is set")
		}
		t.Skip("xmllint is not installed (apt-get install libxml2-utils)")
	}
	doc, _ := mixedJUnit(t)
	stripped := regexp.MustCompile(`(<testcase [^>]*?) file="[^"]*" line="[0-9]+"`).ReplaceAll(doc, []byte("$1"))
	require.NotContains(t, string(stripped), ` line="`)
	suite := regexp.MustCompile(`(?s)<testsuite .*</testsuite>`).Find(stripped)
	require.NotNil(t, suite)
	dir := t.TempDir()
	tests := map[string]struct{ xsd, doc string }{
		"jenkins junit-10": {xsd: "jenkins-junit-10.xsd", doc: string(stripped)},
		"surefire 3.0":     {xsd: "surefire-test-report-3.0.xsd", doc: xml.Header + string(suite)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, tt.xsd+".xml")
			require.NoError(t, os.WriteFile(path, []byte(tt.doc), 0o644))
			xsd, err := filepath.Abs(filepath.Join("testdata", "junit", tt.xsd))
			require.NoError(t, err)
			out, err := exec.Command("xmllint", "--noout", "--schema", xsd, path).CombinedOutput()
			assert.NoError(t, err, "%s", out)
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
