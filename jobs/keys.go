package jobs

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// sessionKey builds the key of a session; see Session.Key.
func sessionKey(id string, names []string, matrix map[string]string, r, repeats int) string {
	var b strings.Builder
	b.WriteString(id)
	for _, name := range names {
		b.WriteString("+" + name + "=" + keyValue(matrix[name]))
	}
	if repeats > 1 {
		b.WriteString(".r" + strconv.Itoa(r))
	}
	return b.String()
}

// maxKeyValue is the longest matrix value kept in a key before the hash suffix.
const maxKeyValue = 40

// keyValue makes a matrix value safe for a key: characters outside [A-Za-z0-9._-]
// become '_', the result is cut to maxKeyValue bytes, and when that changed the value
// (or it is empty) a dash and 8 hex digits of its SHA-256 follow, keeping keys unique.
func keyValue(v string) string {
	var b strings.Builder
	for _, c := range v {
		if c < 128 && keyByte(byte(c)) {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	changed := out != v
	if len(out) > maxKeyValue {
		out, changed = out[:maxKeyValue], true
	}
	if !changed && out != "" {
		return out
	}
	sum := sha256.Sum256([]byte(v))
	if out == "" {
		return hex.EncodeToString(sum[:4])
	}
	return out + "-" + hex.EncodeToString(sum[:4])
}

func keyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// checkKeys reports sessions whose keys are equal, or equal but for case (their
// directories would collide on case-insensitive file systems).
func (s *Spec) checkKeys(sessions []Session, ps *problems) {
	seen := make(map[string]Session, len(sessions))
	for _, se := range sessions {
		lk := strings.ToLower(se.Key)
		first, dup := seen[lk]
		if !dup {
			seen[lk] = se
			continue
		}
		jp := fmt.Sprintf("jobs[%d]", se.job)
		fp := fmt.Sprintf("jobs[%d]", first.job)
		if first.Key == se.Key {
			ps.add(s.at(jp+".id"), jp, "session key %q is produced twice (also by job %q, %s at %s)", se.Key, first.JobID, fp, s.at(fp+".id"))
		} else {
			ps.add(s.at(jp+".id"), jp, "session keys %q and %q (job %q, %s at %s) differ only in case; their directories would collide on case-insensitive file systems", se.Key, first.Key, first.JobID, fp, s.at(fp+".id"))
		}
	}
}

// naturalCompare orders strings byte by byte, except that runs of ASCII digits
// compare by numeric value (then by length, so "01" follows "1").
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			if c := cmp.Compare(da, db); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digits(s string) int {
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	return n
}
