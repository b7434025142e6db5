//go:build !linux

package runner

// diskFree fails here: the guard holds no reserve and does not watch.
func diskFree(string) (diskSpace, error) { return diskSpace{}, errNoStatfs }

// allocate fails here.
func allocate(string, uint64) error { return errNoStatfs }
