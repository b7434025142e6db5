package main

import (
	"bytes"
	"sync"

	"go.uber.org/zap"
)

// logLines is the progress writer of --log-format json: each line written to it is one
// JSON log entry (message = the line, logger "progress"), so that stderr holds nothing
// but JSON lines. A partial line waits for its newline.
type logLines struct {
	mu  sync.Mutex
	log *zap.Logger
	buf []byte
}

func newLogLines(log *zap.Logger) *logLines { return &logLines{log: log.Named("progress")} }

// Write logs every complete line of p.
func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimRight(l.buf[:i], "\r")
		if len(line) > 0 {
			l.log.Info(string(line))
		}
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) == 0 {
		l.buf = nil
	}
	return len(p), nil
}
