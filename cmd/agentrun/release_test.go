package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// TestReleaseConfig checks the shape of .goreleaser.yaml (decoded strictly, so a
// misspelt key fails): the linux and darwin binaries on amd64 and arm64 of
// ./cmd/agentrun, static, with the version stamped in, the archive names action.yml
// downloads, and SHA-256 checksums.
func TestReleaseConfig(t *testing.T) {
	t.Parallel()
	var cfg struct {
		Version     int    `yaml:"version"`
		ProjectName string `yaml:"project_name"`
		Builds      []struct {
			ID      string   `yaml:"id"`
			Main    string   `yaml:"main"`
			Binary  string   `yaml:"binary"`
			Env     []string `yaml:"env"`
			Flags   []string `yaml:"flags"`
			LDFlags []string `yaml:"ldflags"`
			GOOS    []string `yaml:"goos"`
			GOARCH  []string `yaml:"goarch"`
		} `yaml:"builds"`
		Archives []struct {
			Formats      []string `yaml:"formats"`
			NameTemplate string   `yaml:"name_template"`
		} `yaml:"archives"`
		Checksum struct {
			NameTemplate string `yaml:"name_template"`
			Algorithm    string `yaml:"algorithm"`
		} `yaml:"checksum"`
		Changelog struct {
			Use string `yaml:"use"`
		} `yaml:"changelog"`
	}
	b, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	require.NoError(t, err)
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&cfg))
	assert.Equal(t, 2, cfg.Version)
	require.Len(t, cfg.Builds, 2, "agentrun and agentrun-worker")
	for i, want := range []string{"agentrun", "agentrun-worker"} {
		bd := cfg.Builds[i]
		assert.Equal(t, "./cmd/"+want, bd.Main)
		assert.Equal(t, want, bd.Binary)
		assert.Contains(t, bd.Env, "CGO_ENABLED=0")
		assert.ElementsMatch(t, []string{"linux", "darwin"}, bd.GOOS)
		assert.ElementsMatch(t, []string{"amd64", "arm64"}, bd.GOARCH)
		require.Len(t, bd.LDFlags, 1)
		assert.Contains(t, bd.LDFlags[0], "-X main.buildVersion={{ .Tag }}")
	}
	// One build identity (worker.Config.Build): the same flags for both.
	assert.Equal(t, cfg.Builds[0].LDFlags, cfg.Builds[1].LDFlags)
	assert.Equal(t, cfg.Builds[0].Flags, cfg.Builds[1].Flags)
	require.Len(t, cfg.Archives, 1)
	assert.Equal(t, "{{ .ProjectName }}_{{ .Os }}_{{ .Arch }}", cfg.Archives[0].NameTemplate)
	assert.Equal(t, "checksums.txt", cfg.Checksum.NameTemplate)
	assert.Equal(t, "sha256", cfg.Checksum.Algorithm)
}
