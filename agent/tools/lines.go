package tools

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// sniffLen is how much of a file is checked for NUL bytes to tell binary from text.
const sniffLen = 8 << 10

// isBinary reports whether the start of a file holds a NUL byte.
func isBinary(head []byte) bool {
	return bytes.IndexByte(head[:min(len(head), sniffLen)], 0) >= 0
}

// lineReader reads lines of any length with bounded memory: it keeps at most max
// bytes of each line and reports whether the rest was cut.
type lineReader struct {
	r    *bufio.Reader
	max  int
	line []byte
	cut  bool
	err  error
}

func newLineReader(r *bufio.Reader, max int) *lineReader {
	return &lineReader{r: r, max: max}
}

// next reads the next line, without its "\n". It returns false at the end of the
// input or on a read error (see Err).
func (l *lineReader) next() bool {
	l.line, l.cut = l.line[:0], false
	read, size := false, 0
	for {
		frag, err := l.r.ReadSlice('\n')
		read = read || len(frag) > 0
		frag = bytes.TrimSuffix(frag, []byte{'\n'})
		size += len(frag)
		if room := l.max - len(l.line); room > 0 {
			l.line = append(l.line, frag[:min(room, len(frag))]...)
		}
		l.cut = size > l.max
		switch {
		case err == nil:
			return true
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return read
		default:
			l.err = err
			return false
		}
	}
}

// reset prepares the reader for new input (after its bufio.Reader was Reset).
func (l *lineReader) reset() { l.line, l.cut, l.err = l.line[:0], false, nil }

// Err returns the read error that ended next, if any.
func (l *lineReader) Err() error { return l.err }
