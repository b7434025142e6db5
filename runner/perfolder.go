package runner

import "sync"

// perFolder holds a value of the run for each folder, made once, by the first session
// that asks for it, and then served to every session: a scan of a checkout, a guard of
// a shared git folder, what a repository's worktrees are made from.
type perFolder[T any] struct {
	mu sync.Mutex
	m  map[string]func() (T, error)
}

// get is the value of folder dir, made by build if no session made it before.
func (p *perFolder[T]) get(dir string, build func() (T, error)) (T, error) {
	p.mu.Lock()
	f, ok := p.m[dir]
	if !ok {
		if p.m == nil {
			p.m = map[string]func() (T, error){}
		}
		f = sync.OnceValues(build)
		p.m[dir] = f
	}
	p.mu.Unlock()
	return f()
}
