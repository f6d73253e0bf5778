package bounded

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// Conn is a net.Conn each of whose reads must get a byte within its idle
// time, whatever read deadline its user set: a read waits until the
// earlier of the user's deadline and the idle time from the read's
// start. A read cut off by the idle time fails with an *Error (ErrIdle);
// one cut off by the user's deadline fails as the connection's reads
// do (os.ErrDeadlineExceeded).
type Conn struct {
	net.Conn
	idle time.Duration

	// mu guards deadline.
	mu sync.Mutex
	// deadline is the read deadline the user set; zero is none.
	deadline time.Time
}

var _ net.Conn = (*Conn)(nil)

// NewConn is c whose reads are held to idle.
func NewConn(c net.Conn, idle time.Duration) *Conn {
	return &Conn{Conn: c, idle: idle}
}

// SetDeadline sets the write deadline, and the read deadline that the
// next reads wait for at most.
func (c *Conn) SetDeadline(t time.Time) error {
	c.setReadDeadline(t)
	return c.Conn.SetWriteDeadline(t)
}

// SetReadDeadline sets the read deadline that the next reads wait for
// at most.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.setReadDeadline(t)
	return nil
}

func (c *Conn) setReadDeadline(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
}

func (c *Conn) Read(p []byte) (int, error) {
	c.mu.Lock()
	user := c.deadline
	c.mu.Unlock()
	d, ours := time.Now().Add(c.idle), true
	if !user.IsZero() && !user.After(d) {
		d, ours = user, false
	}
	if err := c.Conn.SetReadDeadline(d); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	if err != nil && ours && errors.Is(err, os.ErrDeadlineExceeded) {
		return n, idle(c.idle)
	}
	return n, err
}

// Dial connects to addr over TCP within dialTimeout (zero is none) and
// returns the connection held to idle, over TLS when tlsConfig is not
// nil (its ServerName, when empty, addr's host).
func Dial(ctx context.Context, addr string, dialTimeout, idleFor time.Duration, tlsConfig *tls.Config) (net.Conn, error) {
	raw, err := (&net.Dialer{Timeout: dialTimeout}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn := net.Conn(NewConn(raw, idleFor))
	if tlsConfig == nil {
		return conn, nil
	}
	cfg := tlsConfig.Clone()
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = host
		}
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, err
	}
	return tc, nil
}
