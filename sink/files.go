package sink

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Files is the one writer of agentrun's files: every artifact (the session streams
// through Sink, result.json, messages.jsonl and the rest of a session store,
// changes.patch, the run's summaries, junit.xml and run.json) is written through a
// Files, which masks its secrets in what it writes, in every form a writer may have
// escaped them into (JSON and XML). The name of the file says how it is masked: a
// .json file is masked inside its string values (and number literals), so that it
// stays valid JSON, a .jsonl file so line by line, and every other file as text. A nil
// *Files, or one without secrets, writes what it is given.
type Files struct {
	r *Redactor
	// full, when set, is called when a write finds the disk full; true means room was
	// made (a part of a reserve released), and the write is tried again.
	full func() bool
}

// NewFiles returns a writer that masks secrets; empty ones are ignored.
func NewFiles(secrets []string) *Files {
	return &Files{r: NewRedactor(nil, secrets)}
}

// DiskFull reports whether err says that the disk is full, or the user's quota of it
// spent.
func DiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// OnFull makes f call full when a WriteFile finds the disk full (DiskFull), and try the
// write again each time full reports that it made room. It returns f.
func (f *Files) OnFull(full func() bool) *Files {
	f.full = full
	return f
}

// active reports whether there is anything to mask.
func (f *Files) active() bool { return f != nil && len(f.r.forms) > 0 }

// Secrets reports whether f masks anything.
func (f *Files) Secrets() bool { return f.active() }

// Sink returns a redactor in front of next: the streams of a session are masked message
// by message, with secrets split across deltas still found.
func (f *Files) Sink(next Sink) *Redactor {
	if f == nil {
		return NewRedactor(next, nil)
	}
	return &Redactor{next: next, forms: f.r.forms, first: f.r.first, maxLen: f.r.maxLen}
}

// Redactor returns the redactor of f's secrets, for masking strings that are not
// written to a file (logs, results kept in memory); it writes to no sink.
func (f *Files) Redactor() *Redactor {
	if f == nil {
		return NewRedactor(nil, nil)
	}
	return f.r
}

// Mask returns data masked as the file at path would be.
func (f *Files) Mask(path string, data []byte) []byte {
	if !f.active() || len(data) == 0 {
		return data
	}
	switch filepath.Ext(path) {
	case ".json":
		return []byte(f.r.redactJSON(string(data)))
	case ".jsonl":
		lines := bytes.SplitAfter(data, []byte("\n"))
		var b bytes.Buffer
		for _, line := range lines {
			body := bytes.TrimRight(line, "\r\n")
			b.WriteString(f.r.redactJSON(string(body)))
			b.Write(line[len(body):])
		}
		return b.Bytes()
	}
	return []byte(f.r.redact(string(data)))
}

// WriteFile writes data, masked, to a temporary file in path's folder (created when
// missing), syncs it when sync is set and renames it over path, so readers see the old
// content or the new, never a mix.
//
// A write that finds the disk full is tried again each time OnFull's function made
// room, until it has none left to make.
func (f *Files) WriteFile(path string, data []byte, sync bool) error {
	data = f.Mask(path, data)
	err := writeAtomic(path, data, sync)
	for DiskFull(err) && f != nil && f.full != nil && f.full() {
		err = writeAtomic(path, data, sync)
	}
	return err
}

// writeAtomic is WriteFile of data as it is.
func writeAtomic(path string, data []byte, sync bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	// The room ReserveFile set aside for path, where it did: overwritten, cut to the
	// data's length, renamed over path.
	tmp, err := os.OpenFile(reservedName(path), os.O_WRONLY, 0)
	reserved := err == nil
	if !reserved {
		if tmp, err = createTemp(dir, "."+filepath.Base(path)+".tmp"); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Base(path), err)
		}
	}
	_, werr := tmp.Write(data)
	if werr == nil && reserved {
		werr = tmp.Truncate(int64(len(data)))
	}
	if werr == nil && sync {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name()) // werr is what is reported; a leftover temp file is harmless
		return fmt.Errorf("write %s: %w", filepath.Base(path), werr)
	}
	return nil
}

// ReserveFile sets aside, for a later WriteFile of path, a file of size bytes beside
// it, its inode and blocks allocated. That write fills it and renames it over path, so
// it needs no room of the disk up to size: the result of a session that runs when a
// tool fills the disk still has its room. One write takes it; the next writes as any.
func ReserveFile(path string, size int64) error {
	name := reservedName(path)
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("reserve %s: %w", filepath.Base(path), err)
	}
	err = allocate(f, size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return fmt.Errorf("reserve %s: %w", filepath.Base(path), err)
	}
	return nil
}

// reservedName is the file ReserveFile sets aside for path.
func reservedName(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".reserved")
}

// WriteJSON writes v as indented JSON with WriteFile, synced.
func (f *Files) WriteJSON(path string, v any) error { return f.writeJSON(path, v, true) }

// WriteJSONUnsynced is WriteJSON without the sync: still atomic (the old content or the
// new, never a mix, whatever happens to the process), for a caller that makes its
// folder durable later in one sync (the runner's session results, synced when the run
// ends).
func (f *Files) WriteJSONUnsynced(path string, v any) error { return f.writeJSON(path, v, false) }

func (f *Files) writeJSON(path string, v any, sync bool) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return f.WriteFile(path, append(b, '\n'), sync)
}

// Create opens path for writing, truncated (flag O_APPEND appends instead), and
// returns a writer that masks each Write on its own: write whole records (lines).
func (f *Files) Create(path string, flag int) (*File, error) {
	if flag&os.O_APPEND == 0 {
		flag |= os.O_TRUNC
	}
	file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|flag, 0o644)
	if err != nil {
		return nil, err
	}
	return &File{f: file, files: f, path: path}, nil
}

// OpenAppend opens path for appending whole records, creating it when missing.
func (f *Files) OpenAppend(path string) (io.WriteCloser, error) {
	return f.Create(path, os.O_APPEND)
}

// File is a file opened by Files.Create.
type File struct {
	f     *os.File
	files *Files
	path  string
}

// Write masks p and writes it; it reports len(p) written when the masked bytes were.
func (w *File) Write(p []byte) (int, error) {
	if _, err := w.f.Write(w.files.Mask(w.path, p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close closes the file.
func (w *File) Close() error { return w.f.Close() }

// xmlForms returns the forms s takes escaped as XML character data or an attribute
// value, as encoding/xml writes them (when they differ from s).
func xmlForms(s string) []string {
	var b strings.Builder
	_ = xmlEscape(&b, s)
	if b.String() == s {
		return nil
	}
	return []string{b.String()}
}

// createTemp creates a new file in dir named prefix and a random suffix, with mode 0644
// less the umask, unlike os.CreateTemp's 0600: the reports and artifacts are read by
// other users (a CI runner reading what a container wrote).
func createTemp(dir, prefix string) (*os.File, error) {
	for range 10000 {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(filepath.Join(dir, prefix+hex.EncodeToString(b[:])), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if !os.IsExist(err) {
			return f, err
		}
	}
	return nil, fmt.Errorf("create temporary file in %s: too many collisions", dir)
}
