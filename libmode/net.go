package libmode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// addr is an endpoint of the in-memory network ("c1", "redis-1:6379").
type addr string

func (a addr) Network() string { return "locklab" }
func (a addr) String() string  { return string(a) }

// errReset is what a connection answers after the instance it reached
// closed it (a protocol error, QUIT).
var errReset = errors.New("connection reset by the simulated instance")

// timeoutError is a read or write deadline that passed: net.Error with
// Timeout true, wrapping os.ErrDeadlineExceeded as the net package's does.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout (virtual time)" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
func (timeoutError) Unwrap() error   { return os.ErrDeadlineExceeded }

// conn is one client connection to a simulated instance: the client's side
// is a net.Conn whose reads wait on channels of the bubble (durably
// blocking), the instance's side lives in the kernel. Bytes a client
// writes travel as one message each, delivered in order after the link's
// latency.
type conn struct {
	w      *world
	key    string // canonical name: client>server#n
	client string
	srv    *server
	id     int64

	mu     sync.Mutex
	in     []byte // delivered to the client, not yet read
	rdl    time.Time
	closed bool
	reset  bool
	notify chan struct{} // cap 1: something changed for a reader
	done   chan struct{} // closed by Close

	// kernel side (under w.mu)
	sbuf     []byte // arrived at the instance, not yet a whole command
	sess     sessionState
	dead     bool // a lossy cut dropped a message: nothing more gets through
	upSeq    uint64
	downSeq  uint64
	lastUp   time.Duration
	lastDown time.Duration
}

// Read blocks on the bubble's channels until bytes arrive, the deadline
// passes or the connection is closed.
func (c *conn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		if len(c.in) > 0 {
			n := copy(p, c.in)
			c.in = c.in[n:]
			c.mu.Unlock()
			return n, nil
		}
		if c.closed {
			c.mu.Unlock()
			return 0, net.ErrClosed
		}
		if c.reset {
			c.mu.Unlock()
			return 0, errReset
		}
		dl := c.rdl
		c.mu.Unlock()
		var expire <-chan time.Time
		if !dl.IsZero() {
			d := time.Until(dl)
			if d <= 0 {
				return 0, timeoutError{}
			}
			t := time.NewTimer(d)
			expire = t.C
			defer t.Stop() // one timer per wait; a read waits a few times at most
		}
		select {
		case <-c.notify:
		case <-c.done:
		case <-c.w.over:
			return 0, errRunOver
		case <-expire:
			return 0, timeoutError{}
		}
	}
}

// Write hands p to the kernel, which delivers it after the link's latency.
// It never blocks: the network's buffers are unbounded.
func (c *conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	closed, reset := c.closed, c.reset
	c.mu.Unlock()
	if closed {
		return 0, net.ErrClosed
	}
	if reset {
		return 0, errReset
	}
	c.w.sendUp(c, append([]byte(nil), p...))
	return len(p), nil
}

// Close closes the client's side; the instance forgets the connection.
func (c *conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	close(c.done)
	return nil
}

func (c *conn) LocalAddr() net.Addr  { return addr(c.client) }
func (c *conn) RemoteAddr() net.Addr { return addr(c.srv.addr) }

func (c *conn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

func (c *conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.rdl = t
	c.mu.Unlock()
	c.poke()
	return nil
}

// SetWriteDeadline is accepted and has no effect: writes never block.
func (c *conn) SetWriteDeadline(time.Time) error { return nil }

// deliver appends b to what the client can read (kernel side).
func (c *conn) deliver(b []byte) {
	c.mu.Lock()
	c.in = append(c.in, b...)
	c.mu.Unlock()
	c.poke()
}

// resetByServer makes the client's reads and writes fail (kernel side).
func (c *conn) resetByServer() {
	c.mu.Lock()
	c.reset = true
	c.mu.Unlock()
	c.poke()
}

func (c *conn) poke() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// dial connects client to the instance at address a: a round trip through
// the kernel (the SYN and its answer take the link's latency, and are held
// or lost by the faults as any message). It fails at once for an unknown
// address, and when ctx ends or dialWait passes without an answer.
func (w *world) dial(ctx context.Context, client, a string) (net.Conn, error) {
	srv := w.serverAt(a)
	if srv == nil {
		return nil, &net.OpError{Op: "dial", Net: "locklab", Addr: addr(a),
			Err: fmt.Errorf("no simulated instance at %q (the instances are %v)", a, w.addrs())}
	}
	c, ready := w.connect(client, srv)
	t := time.NewTimer(dialWait)
	defer t.Stop()
	select {
	case err := <-ready:
		if err != nil {
			return nil, &net.OpError{Op: "dial", Net: "locklab", Addr: addr(a), Err: err}
		}
		return c, nil
	case <-ctx.Done():
		return nil, &net.OpError{Op: "dial", Net: "locklab", Addr: addr(a), Err: ctx.Err()}
	case <-w.over:
		return nil, &net.OpError{Op: "dial", Net: "locklab", Addr: addr(a), Err: errRunOver}
	case <-t.C:
		return nil, &net.OpError{Op: "dial", Net: "locklab", Addr: addr(a), Err: timeoutError{}}
	}
}

// dialWait is how long a dial waits for its answer when its context has no
// deadline: a SYN lost to a cut is not retried.
const dialWait = 5 * time.Second
