package redislive

import (
	"net"
	"sync"
	"time"

	"github.com/locklab/locklab/internal/tcpproxy"
)

// lagLink forwards TCP connections from its own loopback address to a
// target and delays the bytes of each direction by an amount set at run
// time: the live form of a delay fault on a replication link (the primary's
// stream lagging on its way to a replica). Bytes keep their order; each
// chunk waits until it is `delay` old.
type lagLink struct {
	target string
	ln     *tcpproxy.Listener

	mu     sync.Mutex
	toDial time.Duration // delay of what the target sends back (primary -> replica)
	toTarg time.Duration // delay of what the dialler sends (replica -> primary)
	until  time.Time     // the delays end then (zero: never)
}

func newLagLink(target string) (*lagLink, error) {
	ln, err := tcpproxy.Listen("lag stage to " + target)
	if err != nil {
		return nil, err
	}
	l := &lagLink{target: target, ln: ln}
	ln.Serve(l.connect)
	return l, nil
}

func (l *lagLink) addr() string { return l.ln.Addr() }

// set delays what the target sends back by back and what the dialler sends
// by forth, until until (zero: until the run ends).
func (l *lagLink) set(back, forth time.Duration, until time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if back > 0 {
		l.toDial = back
	}
	if forth > 0 {
		l.toTarg = forth
	}
	l.until = until
}

func (l *lagLink) lag(back bool) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.until.IsZero() && time.Now().After(l.until) {
		return 0
	}
	if back {
		return l.toDial
	}
	return l.toTarg
}

func (l *lagLink) close() { l.ln.Close() }

// connect dials the target for a connection the stage accepted and pipes
// the two through the lag.
func (l *lagLink) connect(c net.Conn) {
	s, err := net.Dial("tcp", l.target)
	if err != nil {
		c.Close()
		return
	}
	if !l.ln.Track(c) || !l.ln.Track(s) {
		s.Close() // Track closed c
		return
	}
	l.ln.Go(func() { l.pipe(s, c, false) })
	l.ln.Go(func() { l.pipe(c, s, true) })
}

type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst, each chunk delayed by the link's current lag.
func (l *lagLink) pipe(dst, src net.Conn, back bool) {
	q := make(chan chunk, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range q {
			if d := time.Until(c.at); d > 0 {
				time.Sleep(d)
			}
			if _, err := dst.Write(c.b); err != nil {
				src.Close()
				for range q {
				}
				return
			}
		}
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{b: append([]byte(nil), buf[:n]...), at: time.Now().Add(l.lag(back))}
		}
		if err != nil {
			break
		}
	}
	close(q)
	<-done
}
