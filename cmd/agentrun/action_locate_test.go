package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/testbuild"
)

// releaseArchive is a GoReleaser-shaped archive holding an executable named agentrun
// that prints marker, its agentrun-worker, and a README.
func releaseArchive(t *testing.T, marker string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name, body string
		mode       int64
	}{{"agentrun", "#!/bin/sh\necho " + marker + "\n", 0o755}, {"agentrun-worker", "#!/bin/sh\nexit 2\n", 0o755},
		{"README.md", "readme\n", 0o644}} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body))}))
		_, err := tw.Write([]byte(f.body))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

// TestActionFindsTheBinary runs the action's first step as GitHub would: it takes the
// release binary of the action's ref when its checksum matches, refuses one that does
// not, builds when the ref has no release, and uses the binary input as it is.
func TestActionFindsTheBinary(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	archive := releaseArchive(t, "release-binary")
	sum := sha256.Sum256(archive)
	asset := "agentrun_linux_amd64.tar.gz"
	good := hex.EncodeToString(sum[:]) + "  " + asset + "\n"
	bad := strings.Repeat("0", 64) + "  " + asset + "\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1.2.3/" + asset, "/v6.6.6/" + asset:
			_, _ = w.Write(archive)
		case "/v1.2.3/checksums.txt":
			_, _ = w.Write([]byte(good))
		case "/v6.6.6/checksums.txt":
			_, _ = w.Write([]byte(bad))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	own := filepath.Join(t.TempDir(), "my-agentrun")
	testbuild.WriteExecutable(t, own, []byte("#!/bin/sh\necho own-binary\n"))

	tests := map[string]struct {
		ref, binary string
		wantCode    int
		wantBuild   string
		wantRuns    string // what the binary found prints
		wantLog     string
	}{
		"release":           {ref: "v1.2.3", wantBuild: "false", wantRuns: "release-binary", wantLog: "sha256 " + hex.EncodeToString(sum[:])},
		"checksum mismatch": {ref: "v6.6.6", wantCode: 1, wantLog: "does not match its checksums.txt"},
		"no release":        {ref: "main", wantBuild: "true", wantLog: "building it"},
		"binary input":      {ref: "v1.2.3", binary: own, wantBuild: "false", wantRuns: "own-binary"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			temp := t.TempDir()
			code, log, outputs := runActionStep(t, t.TempDir(), "locate", map[string]string{
				"binary": tt.binary, "github.action_ref": tt.ref, "github.action_repository": "agentrun/agentrun",
				"github.action_path": absRoot(t),
			}, "RUNNER_TEMP="+temp, "RUNNER_OS=Linux", "RUNNER_ARCH=X64", "AGENTRUN_RELEASE_BASE="+srv.URL,
				"GITHUB_PATH="+filepath.Join(temp, "path"))
			require.Equal(t, tt.wantCode, code, log)
			assert.Contains(t, log, tt.wantLog)
			if tt.wantCode != 0 {
				assert.NoFileExists(t, filepath.Join(temp, "agentrun-bin", "agentrun"), "a binary that fails its checksum is not installed")
				return
			}
			assert.Equal(t, tt.wantBuild, outputs["build"])
			assert.Equal(t, filepath.Join(temp, "agentrun-bin"), outputs["dir"])
			assert.Len(t, outputs["gosum"], 16, "the build cache key part from go.sum")
			if tt.wantRuns == "" {
				return
			}
			out, err := exec.Command(outputs["path"]).Output()
			require.NoError(t, err)
			assert.Equal(t, tt.wantRuns+"\n", string(out))
			assert.NoFileExists(t, filepath.Join(temp, "agentrun-bin", "README.md"), "only the binaries are unpacked")
			if tt.binary == "" {
				assert.FileExists(t, filepath.Join(temp, "agentrun-bin", "agentrun-worker"), "the worker is unpacked beside agentrun")
			}
		})
	}
}

// absRoot is the repository's root as an absolute path, as github.action_path is.
func absRoot(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs(repoRoot)
	require.NoError(t, err)
	return abs
}
