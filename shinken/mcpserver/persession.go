package mcpserver

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// perSession holds one value of an MCP session's (its shell, its
// background commands), made at its first use and ended with the session,
// or at closeAll.
type perSession[T comparable] struct {
	mu  sync.Mutex
	m   map[*mcp.ServerSession]T
	end func(T)
}

// get returns ss's value, making it with create (under the lock: two
// first calls make one) and ending it when ss ends.
func (p *perSession[T]) get(ss *mcp.ServerSession, create func() (T, error)) (T, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h, ok := p.m[ss]; ok {
		return h, nil
	}
	h, err := create()
	if err != nil {
		return h, err
	}
	if p.m == nil {
		p.m = map[*mcp.ServerSession]T{}
	}
	p.m[ss] = h
	if ss != nil {
		go func() {
			ss.Wait()
			p.drop(ss, h)
			p.end(h)
		}()
	}
	return h, nil
}

// take removes ss's value and returns it (ok false when it had none).
func (p *perSession[T]) take(ss *mcp.ServerSession) (h T, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok = p.m[ss]
	delete(p.m, ss)
	return h, ok
}

// drop removes ss's value if it is still h.
func (p *perSession[T]) drop(ss *mcp.ServerSession, h T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur, ok := p.m[ss]; ok && cur == h {
		delete(p.m, ss)
	}
}

// closeAll ends every session's value.
func (p *perSession[T]) closeAll() {
	p.mu.Lock()
	hs := p.m
	p.m = nil
	p.mu.Unlock()
	for _, h := range hs {
		p.end(h)
	}
}
