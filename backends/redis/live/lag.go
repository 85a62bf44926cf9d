package redislive

import (
	"net"
	"sync"
	"time"
)

// lagLink forwards TCP connections from its own loopback address to a
// target and delays the bytes of each direction by an amount set at run
// time: the live form of a delay fault on a replication link (the primary's
// stream lagging on its way to a replica). Bytes keep their order; each
// chunk waits until it is `delay` old.
type lagLink struct {
	target string
	ln     net.Listener

	mu     sync.Mutex
	toDial time.Duration // delay of what the target sends back (primary -> replica)
	toTarg time.Duration // delay of what the dialler sends (replica -> primary)
	until  time.Time     // the delays end then (zero: never)
	conns  []net.Conn
	closed bool
	wg     sync.WaitGroup
}

func newLagLink(target string) (*lagLink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &lagLink{target: target, ln: ln}
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

func (l *lagLink) addr() string { return l.ln.Addr().String() }

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

func (l *lagLink) close() {
	l.mu.Lock()
	l.closed = true
	l.ln.Close()
	for _, c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

func (l *lagLink) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", l.target)
		if err != nil {
			c.Close()
			continue
		}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			c.Close()
			s.Close()
			return
		}
		l.conns = append(l.conns, c, s)
		l.wg.Add(2)
		l.mu.Unlock()
		go l.pipe(s, c, false)
		go l.pipe(c, s, true)
	}
}

type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies src to dst, each chunk delayed by the link's current lag.
func (l *lagLink) pipe(dst, src net.Conn, back bool) {
	defer l.wg.Done()
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
