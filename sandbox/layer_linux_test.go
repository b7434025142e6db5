package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() { childScenarios["layer"] = layerChild }

// layerChild runs in the namespaces of level strict. It mounts the cache
// $LAYER_DIR/host, a name with a comma and a colon, at $LAYER_DIR/new/d with its layers
// in $LAYER_DIR/layers, as $LAYER_HOW says (overlay: layer, the way a session's cache
// is mounted; private: privateCache, where the kernel mounts no overlay), says ready,
// and once its input has a line reports what it reads and writes there.
func layerChild() int {
	dir := os.Getenv("LAYER_DIR")
	host, d, layers := filepath.Join(dir, "ho,st:1"), filepath.Join(dir, "new", "d"), filepath.Join(dir, "layers")
	b := Bind{Path: host, Write: true, Upper: layers}
	var err error
	switch how := os.Getenv("LAYER_HOW"); how {
	case "overlay":
		err = layer(b, host, d, layers)
	case "private":
		if err = os.MkdirAll(filepath.Join(layers, "upper"), 0o700); err == nil {
			err = privateCache(b, filepath.Join(layers, "upper"), d)
		}
	default:
		err = fmt.Errorf("LAYER_HOW %q", how)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	report("ready", 1)
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	read := func() string {
		b, err := os.ReadFile(filepath.Join(d, "entry"))
		if err != nil {
			return "error " + err.Error()
		}
		return strings.TrimSpace(string(b))
	}
	report("was", read())
	report("write", fmt.Sprint(os.WriteFile(filepath.Join(d, "entry"), []byte("poisoned\n"), 0o644)))
	report("add", fmt.Sprint(os.WriteFile(filepath.Join(d, "added"), []byte("new\n"), 0o644)))
	report("now", read())
	return 0
}

// TestCacheLayer mounts a cache as a session's is, and as it is where the kernel mounts
// no overlay in a user namespace: the tools read the host's entry through the overlay
// (in the second way the cache is empty), and both ways they write it and add one
// while the host's folder stays as it was.
func TestCacheLayer(t *testing.T) {
	if err := Probe().Supports(LevelStrict); err != nil {
		t.Skip(err)
	}
	for how, was := range map[string]string{"overlay": "the compiled package", "private": "error open"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			host := filepath.Join(dir, "ho,st:1")
			for _, p := range []string{host, filepath.Join(dir, "new", "d"), filepath.Join(dir, "layers")} {
				require.NoError(t, os.MkdirAll(p, 0o755))
			}
			require.NoError(t, os.WriteFile(filepath.Join(host, "entry"), []byte("the compiled package\n"), 0o644))
			got := runReadyChild(t, "layer", func() {}, "LAYER_DIR="+dir, "LAYER_HOW="+how)
			assert.Contains(t, got["was"], was)
			assert.Equal(t, "<nil>", got["write"])
			assert.Equal(t, "<nil>", got["add"])
			assert.Equal(t, "poisoned", got["now"])
			b, err := os.ReadFile(filepath.Join(host, "entry"))
			require.NoError(t, err)
			assert.Equal(t, "the compiled package\n", string(b), "ESCAPE: the tools changed the host's cache")
			assert.NoFileExists(t, filepath.Join(host, "added"), "ESCAPE: the tools added to the host's cache")
		})
	}
}
