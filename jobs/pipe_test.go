package jobs

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const pipeSpec = "version: 1\njobs:\n  - id: a\n    prompt: p\n"

// loadWithin runs Load(path) and fails the test when it has not returned within
// limit; a Load blocked in opening the FIFO is then released by opening it for writing,
// so the goroutine always ends before loadWithin returns.
func loadWithin(t *testing.T, path string, limit time.Duration) (*Spec, error) {
	t.Helper()
	type result struct {
		s   *Spec
		err error
	}
	done := make(chan result, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s, err := Load(path, nil)
		done <- result{s, err}
	}()
	defer wg.Wait()
	select {
	case r := <-done:
		return r.s, r.err
	case <-time.After(limit):
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		t.Fatalf("Load(%s) still blocked after %v", path, limit)
		return nil, nil
	}
}

// TestLoadPipe checks specs read from pipes: a FIFO that nobody writes to is an error
// after PipeWait (it blocked forever), a FIFO with a writer and the /dev/fd/N of a
// process substitution whose writer has already finished both load.
func TestLoadPipe(t *testing.T) {
	defer func(d time.Duration) { PipeWait = d }(PipeWait)
	PipeWait = 200 * time.Millisecond

	t.Run("FIFO without a writer", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "spec.yaml")
		require.NoError(t, syscall.Mkfifo(path, 0o600))
		_, err := loadWithin(t, path, 5*time.Second)
		require.ErrorIs(t, err, ErrPipeTimeout)
		assert.Contains(t, err.Error(), path+": no process writes to this pipe (waited 200ms for the spec)")
	})
	t.Run("FIFO with a writer", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "spec.yaml")
		require.NoError(t, syscall.Mkfifo(path, 0o600))
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := os.OpenFile(path, os.O_WRONLY, 0) // blocks until Load opens it
			if assert.NoError(t, err) {
				_, err = w.WriteString(pipeSpec)
				assert.NoError(t, err)
				assert.NoError(t, w.Close())
			}
		}()
		s, err := loadWithin(t, path, 5*time.Second)
		wg.Wait()
		require.NoError(t, err)
		assert.Len(t, s.Jobs, 1)
	})
	t.Run("process substitution, writer gone", func(t *testing.T) {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		defer func() { _ = r.Close() }()
		_, err = w.WriteString(pipeSpec)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		s, err := loadWithin(t, "/proc/self/fd/"+strconv.Itoa(int(r.Fd())), 5*time.Second)
		require.NoError(t, err)
		assert.Len(t, s.Jobs, 1)
	})
}
