package framework

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy is a TCP proxy in front of the API server that a test can cut, so
// that a client (kubectl rv watch through --server Proxy.URL) loses its
// connection and cannot reconnect while the test writes behind its back.
// TLS passes through untouched: the API server's certificate names
// 127.0.0.1, whatever the port.
type Proxy struct {
	// URL is the proxy's https URL, for --server.
	URL string

	ln       net.Listener
	upstream string
	// mu guards blocked and conns.
	mu      sync.Mutex
	blocked bool
	conns   map[net.Conn]struct{}
}

// StartProxy starts a proxy to the API server; the test's cleanup stops it.
func (c *Cluster) StartProxy(t testing.TB) *Proxy {
	t.Helper()
	u, err := url.Parse(c.APIServer)
	if err != nil {
		t.Fatalf("API server URL %q: %v", c.APIServer, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{URL: "https://" + ln.Addr().String(), ln: ln, upstream: u.Host, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.Block()
	})
	return p
}

func (p *Proxy) serve() {
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.blocked {
			p.mu.Unlock()
			_ = down.Close()
			continue
		}
		up, err := net.Dial("tcp", p.upstream)
		if err != nil {
			p.mu.Unlock()
			_ = down.Close()
			continue
		}
		p.conns[down], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		go p.pipe(down, up)
		go p.pipe(up, down)
	}
}

func (p *Proxy) pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Block cuts every connection and refuses new ones until Unblock.
func (p *Proxy) Block() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked = true
	for c := range p.conns {
		_ = c.Close()
	}
}

// Unblock accepts connections again.
func (p *Proxy) Unblock() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked = false
}
