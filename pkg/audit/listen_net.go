package audit

import (
	"net"
	"sync"
)

// capListener bounds the connections each remote address holds at once:
// one more is closed as soon as it is accepted (refused is told), so
// that one sender's connections, slow or idle, cannot take every file
// descriptor the receiver has.
type capListener struct {
	net.Listener
	max     int
	refused func(remote string)
	// mu guards conns, the connections open by address.
	mu    sync.Mutex
	conns map[string]int
}

func (c *capListener) Accept() (net.Conn, error) {
	for {
		conn, err := c.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := conn.RemoteAddr().String()
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		c.mu.Lock()
		if c.conns[host] >= c.max {
			c.mu.Unlock()
			_ = conn.Close()
			c.refused(conn.RemoteAddr().String())
			continue
		}
		c.conns[host]++
		c.mu.Unlock()
		return &cappedConn{Conn: conn, release: func() { c.release(host) }}, nil
	}
}

func (c *capListener) release(host string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conns[host]--; c.conns[host] <= 0 {
		delete(c.conns, host)
	}
}

// cappedConn is a connection a capListener counts until it is closed.
type cappedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *cappedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite is the TCP connection's, which net/http uses to close a
// connection gracefully.
func (c *cappedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
