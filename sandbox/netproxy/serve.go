package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/agentrun/agentrun/protocol"
)

// tracker holds a server's open connections so that stopping closes them all.
type tracker struct {
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// add tracks c; once the tracker is closed it closes c and returns false.
func (t *tracker) add(c net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		_ = c.Close()
		return false
	}
	t.conns[c] = struct{}{}
	return true
}

// remove stops tracking c, which its handler closes itself.
func (t *tracker) remove(c net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.conns, c)
}

func (t *tracker) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for c := range t.conns {
		_ = c.Close()
	}
}

// serve accepts connections on l and runs handle for each in a goroutine it owns,
// until ctx is done or l fails. Then it closes l and every connection handed to
// t.Add, waits for the handlers and returns nil, or the accept error that stopped it.
func serve(ctx context.Context, l net.Listener, handle func(ctx context.Context, t *tracker, c net.Conn)) error {
	t := &tracker{conns: map[net.Conn]struct{}{}}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-stop:
		}
		_ = l.Close()
		t.closeAll()
	})
	var err error
	for backoff := time.Duration(0); ; {
		c, aerr := l.Accept()
		if aerr != nil {
			if ctx.Err() != nil || errors.Is(aerr, net.ErrClosed) {
				break
			}
			if isTemporary(aerr) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				if protocol.Sleep(ctx, backoff) == nil {
					continue
				}
				break
			}
			err = fmt.Errorf("netproxy: accept: %w", aerr)
			break
		}
		backoff = 0
		if !t.add(c) {
			break
		}
		wg.Go(func() {
			defer t.remove(c)
			defer func() { _ = c.Close() }()
			handle(ctx, t, c)
		})
	}
	close(stop)
	wg.Wait()
	return err
}

// isTemporary reports accept errors worth retrying: out of descriptors, or a
// connection aborted before it was accepted.
func isTemporary(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ENOBUFS)
}

// splice copies a (read through ar, which may hold bytes already buffered from a)
// to b and b to a until both directions end. A direction that ends, cleanly or not,
// half-closes its destination, so that data already under way the other way (such as
// an error response to a request the far side stopped reading) still arrives.
func splice(a net.Conn, ar io.Reader, b net.Conn) {
	var wg sync.WaitGroup
	wg.Go(func() { pipe(b, ar) })
	pipe(a, b)
	wg.Wait()
}

type closeWriter interface{ CloseWrite() error }

func pipe(dst net.Conn, src io.Reader) {
	_, _ = io.Copy(dst, src)
	if cw, ok := dst.(closeWriter); ok && cw.CloseWrite() == nil {
		return
	}
	_ = dst.Close()
}
