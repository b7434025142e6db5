package jsonscan

// Ptr reads a value for the pointer *p as encoding/json does: null sets *p to nil; any
// other value is read by read into **p, which Ptr allocates first when *p is nil (a
// pointer already set, by a repeated member, is read into again).
func Ptr[T any](s *Scanner, p **T, read func(*T) bool) bool {
	if s.Null() {
		*p = nil
		return true
	}
	if *p == nil {
		*p = new(T)
	}
	return read(*p)
}

// PtrTo reads like Ptr, but points *p at spare instead of allocating when *p is nil,
// zeroing spare first: for a decoder that reads a pointer member of every event and
// uses it only until the next one.
func PtrTo[T any](s *Scanner, p **T, spare *T, read func(*T) bool) bool {
	if *p == nil && !s.peekNull() {
		var zero T
		*spare = zero
		*p = spare
	}
	return Ptr(s, p, read)
}

// Slice reads an array into *p as encoding/json does: null sets *p to nil; elements are
// read by read into the elements of *p, reused in place and appended as zero values
// when *p is shorter, and *p is cut to the array's length (an empty array gives an
// empty slice, not nil). A decoder that reuses a slice from one event to the next cuts
// it to length zero first, keeping its array.
func Slice[T any](s *Scanner, p *[]T, read func(*T) bool) bool {
	if s.Null() {
		*p = nil
		return true
	}
	n := 0
	ok := s.Array(func() bool {
		if n == len(*p) {
			var zero T
			*p = append(*p, zero)
		}
		n++
		return read(&(*p)[n-1])
	})
	*p = (*p)[:n]
	if n == 0 && *p == nil {
		*p = []T{}
	}
	return ok
}
