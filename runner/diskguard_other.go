//go:build !linux

package runner

// diskFree fails here: the guard holds no reserve and does not watch.
func diskFree(string) (avail, size uint64, err error) { return 0, 0, errNoStatfs }

// allocate fails here.
func allocate(string, uint64) error { return errNoStatfs }
