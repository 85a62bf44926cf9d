package tcpproxy

import (
	"fmt"
	"net"
	"sync"
)

// Listener is what every forwarder of live mode stands on (a Proxy, and the
// forwarders of its own some systems put on a link: a lag stage, a rewriter
// of addresses): a free 127.0.0.1 port, the loop that accepts its
// connections, and what Close must end — the connections given to Track and
// the goroutines started with Go.
type Listener struct {
	ln net.Listener
	wg sync.WaitGroup

	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

// Listen opens a Listener named name (for errors) on a free loopback port;
// Serve starts it.
func Listen(name string) (*Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("%s: listen: %w", name, err)
	}
	return &Listener{ln: ln}, nil
}

// Serve accepts connections until Close and gives each to handle, on the
// accepting goroutine: handle tracks what it keeps (Track) and serves it on
// a goroutine of its own (Go).
func (l *Listener) Serve(handle func(c net.Conn)) {
	l.Go(func() {
		for {
			c, err := l.ln.Accept()
			if err != nil {
				return
			}
			handle(c)
		}
	})
}

// Addr is the address to dial.
func (l *Listener) Addr() string { return l.ln.Addr().String() }

// Port is Addr's port.
func (l *Listener) Port() int { return l.ln.Addr().(*net.TCPAddr).Port }

// Track adds c to the connections Close closes. It reports false, having
// closed c, once the Listener is closed.
func (l *Listener) Track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return false
	}
	l.conns = append(l.conns, c)
	return true
}

// Go runs f on a goroutine Close waits for. It is called by Serve, from
// handle or from a goroutine Go started (so that Close cannot be waiting
// already).
func (l *Listener) Go(f func()) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		f()
	}()
}

// Close stops accepting, closes the tracked connections and waits for the
// goroutines. Closing again does nothing more.
func (l *Listener) Close() {
	l.mu.Lock()
	l.closed = true
	l.ln.Close()
	conns := l.conns
	l.conns = nil
	l.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	l.wg.Wait()
}
