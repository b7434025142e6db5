package main

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/agentrun/agentrun"

// allowedImports is the one-way import graph of DESIGN §1: for each package, the
// project packages and outside modules its non-test code may import. The standard
// library is always allowed.
var allowedImports = map[string][]string{
	"protocol":                {},
	"textcut":                 {},
	"transport/sse":           {},
	"transport":               {"protocol", "transport/sse", "textcut"},
	"transport/jsonscan":      {},
	"transport/anthropic":     {"transport", "transport/jsonscan", "transport/sse", "protocol", "textcut"},
	"transport/openai":        {"transport", "transport/jsonscan", "transport/openai/wire", "transport/sse", "protocol", "textcut"},
	"transport/openai/wire":   {"transport", "transport/sse", "protocol", "textcut"},
	"transport/responses":     {"transport", "transport/jsonscan", "transport/openai/wire", "transport/sse", "protocol", "textcut"},
	"transport/scripted":      {"protocol", "textcut", "yamljson", "go.yaml.in/yaml/v3"},
	"transport/transporttest": {"transport", "transport/sse", "protocol", "textcut", "fuzzguard", "github.com/stretchr/testify", "go.yaml.in/yaml/v3"},
	"sink":                    {"protocol", "textcut"},
	"protocol/eventschema":    {"github.com/santhosh-tekuri/jsonschema/v6", "golang.org/x/text"},
	"yamljson":                {"go.yaml.in/yaml/v3"},
	"jobs":                    {"yamljson", "go.yaml.in/yaml/v3", "github.com/santhosh-tekuri/jsonschema/v6", "golang.org/x/text"},
	"pathname":                {},
	"policy":                  {"pathname"},
	"agent/tools":             {"policy", "pathname", "protocol", "textcut", "golang.org/x/sys"},
	"agent":                   {"agent/tools", "policy", "pathname", "protocol", "textcut", "golang.org/x/sys"},
	"sandbox":                 append([]string{"pathname"}, kernelLibs...),
	"sandbox/netproxy":        {"protocol", "golang.org/x/sys"},
	"sandbox/escape":          {},
	"worker":                  append([]string{"agent/tools", "policy", "pathname", "protocol", "textcut", "sandbox"}, kernelLibs...),
	// mcptest builds mcp-test-server, the stdio server of other packages' tests.
	"mcpclient/mcptest":                 append([]string{"testbuild"}, mcpLibs...),
	"mcpclient/mcptest/mcp-test-server": append([]string{"mcpclient/mcptest", "testbuild"}, mcpLibs...),
	// workertest builds agentrun-worker for other packages' tests.
	"worker/workertest": append([]string{"worker", "testbuild", "agent/tools", "policy", "pathname", "protocol", "textcut", "sandbox"}, kernelLibs...),
	"mcpclient":         append([]string{"agent/tools", "policy", "pathname", "protocol", "textcut", "sandbox", "worker"}, mcpLibs...),
	"runner":            runnerImports,
	// providers maps a session's settings to a transport client, for the runner; only
	// cmd wires it (importedOnlyBy).
	"providers": append([]string{"runner", "transport", "transport/anthropic", "transport/openai", "transport/openai/wire",
		"transport/responses", "transport/scripted", "transport/sse", "transport/jsonscan", "yamljson"}, runnerImports...),
	// telemetry is the OpenTelemetry side of the agent's Observer and the runner's
	// Telemetry, wired in by cmd: neither of them sees the SDK.
	"telemetry": append([]string{"agent", "agent/tools", "policy", "pathname", "protocol", "sink", "textcut", "go.uber.org/zap", "go.uber.org/multierr",
		"golang.org/x/sys", "golang.org/x/net", "golang.org/x/text"}, otelModules...),
	"telemetry/otlptest": append([]string{"golang.org/x/sys", "golang.org/x/net", "golang.org/x/text"}, otelModules...),
	"fuzzguard":          {},
	"testexit":           {},
	"testbuild":          {},
	"cmd/agentrun":       {"*"},
	// agentrun-worker is the worker's code alone: what it does not import (the JSON
	// Schema compiler, whose package init costs 8 ms, telemetry, the transports) it
	// never pays for at each of a session's starts.
	"cmd/agentrun-worker": append([]string{"worker", "agent/tools", "policy", "pathname", "protocol", "textcut", "sandbox"}, kernelLibs...),
	"examples":            {"*"},
	"bench":               {"*"},
	"bench/floorstage":    {},
}

// stdForbidden names, for a package, standard-library packages that its non-test code
// must not link, even transitively: agentrun-worker starts at least twice per session
// (its two stages), and an HTTP and TLS stack it never uses would cost each start its
// package init, its CPU-feature probes (each a trap to the hypervisor in a VM) and the
// page faults of a larger binary.
var stdForbidden = map[string][]string{
	"cmd/agentrun-worker": {"net/http", "crypto/tls", "crypto/x509"},
}

// runnerImports are what runner may import.
var runnerImports = append(append([]string{"jobs", "yamljson", "agent", "agent/tools", "policy", "pathname", "sink", "protocol", "textcut", "sandbox", "sandbox/netproxy", "worker",
	"mcpclient", "github.com/sourcegraph/conc", "go.uber.org/zap", "github.com/santhosh-tekuri/jsonschema/v6", "golang.org/x/text",
	"go.yaml.in/yaml/v3", "go.uber.org/multierr"}, kernelLibs...), mcpLibs...)

// importedOnlyBy names, for a package that only some may import directly, the packages
// that may: the providers are wired by the command, never reached for by a layer.
var importedOnlyBy = map[string][]string{
	"providers": {"cmd/agentrun"},
}

// otelModules are the OpenTelemetry SDK, its OTLP exporters and protocol types, and
// what they import.
var otelModules = []string{"go.opentelemetry.io", "github.com/cenkalti/backoff", "github.com/cespare/xxhash",
	"github.com/go-logr", "github.com/google/uuid", "github.com/grpc-ecosystem/grpc-gateway", "google.golang.org/grpc",
	"google.golang.org/protobuf", "google.golang.org/genproto"}

// mcpLibs are the official MCP Go SDK and what it needs, besides kernelLibs (the
// worker that runs stdio servers).
var mcpLibs = append([]string{"github.com/modelcontextprotocol/go-sdk", "github.com/google/jsonschema-go",
	"github.com/segmentio/asm", "github.com/segmentio/encoding", "github.com/yosida95/uritemplate/v3",
	"golang.org/x/net", "golang.org/x/oauth2", "golang.org/x/sync", "golang.org/x/time"}, kernelLibs...)

// kernelLibs are the modules the sandbox confines workers with.
var kernelLibs = []string{"golang.org/x/sys", "github.com/landlock-lsm/go-landlock",
	"kernel.org/pub/linux/libs/security/libcap/psx"}

type listedPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Standard   bool
}

// TestImportGraph checks every package's transitive imports against the graph, so no
// layer reaches into one it must not know (agent never sees transport, protocol is
// the leaf).
func TestImportGraph(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p listedPackage
		require.NoError(t, dec.Decode(&p))
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		allowed, ok := allowedImports[rel]
		if !assert.True(t, ok, "package %s is not in the import graph: add it to allowedImports", rel) {
			continue
		}
		seen++
		for _, imp := range p.Imports {
			if only, ok := importedOnlyBy[strings.TrimPrefix(imp, module+"/")]; ok && !slices.Contains(only, rel) {
				t.Errorf("%s imports %s, which only %s may import", rel, imp, strings.Join(only, ", "))
			}
		}
		for _, dep := range p.Deps { // transitive, of the non-test code
			if slices.Contains(stdForbidden[rel], dep) {
				t.Errorf("%s links %s, which it must not (stdForbidden)", rel, dep)
			}
			if !strings.Contains(strings.SplitN(dep, "/", 2)[0], ".") {
				continue // standard library
			}
			if !permitted(dep, allowed) {
				t.Errorf("%s imports %s, which the graph does not allow", rel, dep)
			}
		}
	}
	assert.Positive(t, seen)
}

// permitted reports whether dep is allowed: a project package is named exactly; an
// outside module allows all of its packages.
func permitted(dep string, allowed []string) bool {
	for _, a := range allowed {
		switch {
		case a == "*":
			return true
		case !strings.Contains(strings.SplitN(a, "/", 2)[0], "."):
			if dep == module+"/"+a {
				return true
			}
		case dep == a || strings.HasPrefix(dep, a+"/"):
			return true
		}
	}
	return false
}

// goAllowed are the packages whose non-test code may start goroutines: the runner's
// pool and watchdogs, tool process I/O, the fake server, the worker (its request
// reader), the sandbox's proxy (one goroutine per connection) and fuzzguard (the
// watchdog of one fuzz input).
var goAllowed = map[string]bool{"runner": true, "agent/tools": true, "cmd/agentrun": true, "worker": true,
	"sandbox/netproxy": true, "fuzzguard": true}

// TestGoStatements checks that the go keyword appears only where DESIGN §1 allows it,
// and that no package has a grab-bag name.
func TestGoStatements(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if name == ".git" || name == "testdata" || strings.HasPrefix(name, ".") && path != root {
				return filepath.SkipDir
			}
			switch name {
			case "util", "utils", "common", "helpers", "misc":
				t.Errorf("package folder %s has a grab-bag name", path)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok && !goAllowed[filepath.ToSlash(rel)] {
				t.Errorf("%s: a go statement outside the packages that may start goroutines", fset.Position(g.Pos()))
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
}
