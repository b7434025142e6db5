package workertest

import (
	"debug/elf"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinIsStatic checks that the worker the tests and benchmarks run is built as the
// release's: an executable with no program interpreter (no dynamic loader, no C
// library to start).
func TestBinIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds agentrun-worker (not with -short)")
	}
	f, err := elf.Open(Bin(t))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "agentrun-worker asks for a dynamic loader")
	}
	assert.NotEmpty(t, f.Progs)
}
