// Package textcut cuts text to a budget of bytes or characters without splitting a
// UTF-8 character, so that a clipped message, excerpt or summary stays valid text.
// It is a leaf like protocol: it imports only the standard library, so that every
// package may use it, including those that import nothing else of the project.
//
// A cut never splits the encoding of a character. Bytes that are not valid UTF-8
// count as one-byte characters: a cut may fall next to them, and they stay as they
// were.
package textcut

import "unicode/utf8"

// Ellipsis is the mark most callers put where text was cut.
const Ellipsis = "…"

// HeadLen is the length of the longest prefix of s that is at most n bytes and does
// not end inside a character: n moved back to a character boundary, or len(s) when s
// fits.
func HeadLen(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	if start, size := charAround(s, n); size > 0 {
		return start
	}
	return n
}

// TailStart is where the longest suffix of s that is at most n bytes and does not
// start inside a character begins: len(s)-n moved forward to a character boundary, or
// 0 when s fits.
func TailStart(s string, n int) int {
	cut := len(s) - max(n, 0)
	if cut <= 0 {
		return 0
	}
	if cut >= len(s) {
		return len(s)
	}
	if start, size := charAround(s, cut); size > 0 {
		return start + size
	}
	return cut
}

// charAround finds the character whose encoding spans position i of s, that is, one
// that starts before i and ends after it. It returns its start and size, or a size
// of 0 when i is a character boundary.
func charAround(s string, i int) (start, size int) {
	if utf8.RuneStart(s[i]) {
		return 0, 0
	}
	for j := i - 1; j >= 0 && j > i-utf8.UTFMax; j-- {
		if !utf8.RuneStart(s[j]) {
			continue
		}
		r, n := utf8.DecodeRuneInString(s[j:])
		if (r != utf8.RuneError || n > 1) && j+n > i {
			return j, n
		}
		return 0, 0
	}
	return 0, 0
}

// Head is the longest prefix of s that is at most n bytes and does not split a
// character.
func Head(s string, n int) string { return s[:HeadLen(s, n)] }

// Tail is the longest suffix of s that is at most n bytes and does not split a
// character.
func Tail(s string, n int) string { return s[TailStart(s, n):] }

// Clip returns s when it is at most n bytes. Otherwise it returns the Head of s that
// leaves room for mark, followed by mark, at most n bytes in all; when n is smaller
// than mark, only the Head of n bytes.
func Clip(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	if n < len(mark) {
		return Head(s, n)
	}
	return Head(s, n-len(mark)) + mark
}

// ClipTail is Clip at the other end: s when it is at most n bytes, otherwise mark
// followed by the Tail of s that leaves room for it.
func ClipTail(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	if n < len(mark) {
		return Tail(s, n)
	}
	return mark + Tail(s, n-len(mark))
}

// RuneLen is the length in bytes of the first n characters of s (all of s when it
// has no more than n).
func RuneLen(s string, n int) int {
	i := 0
	for ; n > 0 && i < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// ClipRunes returns s when it has at most n characters. Otherwise it returns the
// first characters of s that leave room for mark, followed by mark, at most n
// characters in all.
func ClipRunes(s string, n int, mark string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	m := utf8.RuneCountInString(mark)
	if n < m {
		return s[:RuneLen(s, n)]
	}
	return s[:RuneLen(s, n-m)] + mark
}
