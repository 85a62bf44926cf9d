// Package netgate puts a live client's TCP connections to real servers under
// faultnet's control, so that a real client library (clientv3, go-zookeeper)
// is paused and partitioned like the client node it belongs to.
//
// A real library does its network I/O on goroutines of its own (keep-alives,
// pings, watch streams) that faultnet's gate at each lock call does not
// reach: a paused client would go on renewing its lease. A gated connection
// passes the client's gate before every write and before it hands read bytes
// to the library, so a paused client sends nothing and sees nothing until it
// resumes — a process pause as the servers see it (bytes wait in socket
// buffers, timers the library set run late). It also holds every byte while
// faultnet cuts the link (client -> server for writes, server -> client for
// reads): a partition that hangs, as tcpproxy's Hang does, in one direction
// or both, with a TCP socket's timing (see Conn). A dial waits for an open
// link within its timeout.
//
// This package is live-only: nothing simulated imports it.
package netgate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/locklab/locklab/internal/faultnet"
)

// poll is how often a held connection looks again at a cut link.
const poll = 2 * time.Millisecond

// ErrClosed is returned by a gated connection's I/O once the connection or
// the Net is closed while it waited.
var ErrClosed = errors.New("netgate: closed while held")

// Dialer dials servers for one client node through the gate.
type Dialer struct {
	net     *faultnet.Net
	client  string
	servers func(addr string) (string, bool)
}

// New returns the Dialer of client; servers names the server node listening
// at an address (false: not a server of the system; such a dial is refused).
func New(n *faultnet.Net, client string, servers func(addr string) (string, bool)) *Dialer {
	return &Dialer{net: n, client: client, servers: servers}
}

// DialContext dials addr once the client runs and its link to the server is
// open (waiting within ctx), and returns the gated connection.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	server, ok := d.servers(addr)
	if !ok {
		return nil, fmt.Errorf("netgate: %s dials %s, which is no server of this run", d.client, addr)
	}
	g := &Conn{d: d, server: server, closed: make(chan struct{})}
	if err := g.hold(ctx, d.client, server, nil); err != nil {
		return nil, fmt.Errorf("netgate: dial %s (%s): %w", server, addr, err)
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	g.Conn = c
	return g, nil
}

// Dial is DialContext with a timeout (go-zookeeper's Dialer).
func (d *Dialer) Dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, addr)
}

// Conn is a connection held while its client is paused or its link is cut,
// with the timing of a TCP socket: a write goes into the socket's send
// buffer at once, and what a cut held is delivered at the heal, in order,
// even after the client closed the socket (the kernel keeps retransmitting
// an orphaned socket's data and its FIN); a read that a cut starves ends at
// its deadline with a timeout, and the bytes it held stay for the next read.
// Without the deadlines a client library that closes a silent connection
// at its read timeout (go-zookeeper) could not do it while one of its
// goroutines was held in a write, and so never moved to another server.
type Conn struct {
	net.Conn
	d      *Dialer
	server string
	once   sync.Once
	closed chan struct{}

	deadlineMu   sync.Mutex
	readDeadline time.Time

	readMu    sync.Mutex
	unread    []byte // bytes read from the socket and not yet handed over
	unreadErr error  // the error that came with them
	stashed   bool

	writeMu  sync.Mutex
	queue    [][]byte // writes a cut holds, in order
	flushing bool     // a flusher delivers queue
	closing  bool     // closed by the client; the flusher closes the socket
}

// hold waits until the client runs and the link from -> to is open, or
// until deadline (zero: none) has passed.
func (g *Conn) hold(ctx context.Context, from, to string, deadline func() time.Time) error {
	for {
		if err := g.d.net.Gate(g.d.client); err != nil {
			return ErrClosed
		}
		if !g.d.net.Blocked(from, to) {
			return nil
		}
		if deadline != nil {
			if d := deadline(); !d.IsZero() && !time.Now().Before(d) {
				return os.ErrDeadlineExceeded
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-g.closed:
			return ErrClosed
		case <-g.d.net.Done():
			return ErrClosed
		case <-time.After(poll):
		}
	}
}

func (g *Conn) readDeadlineAt() time.Time {
	g.deadlineMu.Lock()
	defer g.deadlineMu.Unlock()
	return g.readDeadline
}

// SetDeadline sets both deadlines (see SetReadDeadline).
func (g *Conn) SetDeadline(t time.Time) error {
	g.deadlineMu.Lock()
	g.readDeadline = t
	g.deadlineMu.Unlock()
	return g.Conn.SetDeadline(t)
}

// SetReadDeadline bounds a read, also while a cut holds its bytes.
func (g *Conn) SetReadDeadline(t time.Time) error {
	g.deadlineMu.Lock()
	g.readDeadline = t
	g.deadlineMu.Unlock()
	return g.Conn.SetReadDeadline(t)
}

// Read reads from the server and hands the bytes (or the error) over once
// the client runs and the link server -> client is open. A read whose
// deadline passes while a cut holds its bytes returns a timeout, as a TCP
// read that nothing reached; the bytes are the next read's.
func (g *Conn) Read(b []byte) (int, error) {
	g.readMu.Lock()
	defer g.readMu.Unlock()
	if !g.stashed {
		n, err := g.Conn.Read(b)
		g.unread, g.unreadErr, g.stashed = append(g.unread[:0], b[:n]...), err, true
	}
	if err := g.hold(context.Background(), g.server, g.d.client, g.readDeadlineAt); err != nil {
		var ne net.Error
		if len(g.unread) == 0 && errors.As(g.unreadErr, &ne) && ne.Timeout() {
			g.stashed = false // the socket's own timeout: nothing is held
		}
		return 0, err
	}
	n := copy(b, g.unread)
	g.unread = g.unread[n:]
	if len(g.unread) > 0 {
		return n, nil
	}
	err := g.unreadErr
	g.unread, g.unreadErr, g.stashed = g.unread[:0], nil, false
	return n, err
}

// Write passes the client's gate (a paused client sends nothing) and then
// writes to the socket, or, while the link client -> server is cut (or
// earlier writes still wait), queues the bytes for the heal and returns at
// once, as a write into a TCP send buffer does.
func (g *Conn) Write(b []byte) (int, error) {
	if err := g.d.net.Gate(g.d.client); err != nil {
		return 0, ErrClosed
	}
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	select {
	case <-g.closed:
		return 0, net.ErrClosed
	default:
	}
	if !g.flushing && !g.d.net.Blocked(g.d.client, g.server) {
		return g.Conn.Write(b)
	}
	g.queue = append(g.queue, append([]byte(nil), b...))
	if !g.flushing {
		g.flushing = true
		go g.flush()
	}
	return len(b), nil
}

// flush delivers the queued writes once the link is open again (the
// kernel's retransmission: a paused client does not stop it), then closes
// the socket if the client closed it meanwhile. The run's end drops them.
func (g *Conn) flush() {
	for g.d.net.Blocked(g.d.client, g.server) {
		select {
		case <-g.d.net.Done():
			g.writeMu.Lock()
			g.queue, g.flushing = nil, false
			g.writeMu.Unlock()
			_ = g.Conn.Close()
			return
		case <-time.After(poll):
		}
	}
	g.writeMu.Lock()
	for _, b := range g.queue {
		if _, err := g.Conn.Write(b); err != nil {
			break // the socket failed: the rest is lost with it
		}
	}
	g.queue, g.flushing = nil, false
	closing := g.closing
	g.writeMu.Unlock()
	if closing {
		_ = g.Conn.Close()
	}
}

// Close closes the connection and releases its held I/O. Writes a cut
// still holds are delivered at the heal before the socket closes (its
// reads end at once).
func (g *Conn) Close() error {
	g.once.Do(func() { close(g.closed) })
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	if g.flushing {
		g.closing = true
		if tc, ok := g.Conn.(interface{ CloseRead() error }); ok {
			return tc.CloseRead()
		}
		return nil
	}
	return g.Conn.Close()
}
