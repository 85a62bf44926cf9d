package tcpproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// noLeaks checks, after the test and its cleanups, that no goroutine the
// test started is left.
func noLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// echo is a loopback server that answers every line with the same line.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn, r *bufio.Reader, msg string, wait time.Duration) (string, error) {
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	return r.ReadString('\n')
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestHangHoldsEverythingUntilHeal(t *testing.T) {
	noLeaks(t)
	p, err := New("c1->s1", echo(t))
	require.NoError(t, err)
	defer p.Close()

	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	got, err := roundTrip(c, r, "before", 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "before\n", got)

	p.Block(Hang)
	assert.Equal(t, Hang, p.Mode())
	_, err = roundTrip(c, r, "during", 200*time.Millisecond)
	assert.True(t, isTimeout(err), "no answer through a hanging link: %v", err)
	// A connection made during the partition is held, not refused.
	c2, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c2.Close()
	r2 := bufio.NewReader(c2)
	_, err = roundTrip(c2, r2, "new", 200*time.Millisecond)
	assert.True(t, isTimeout(err), "a new connection waits too: %v", err)

	p.Heal()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	got, err = r.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "during\n", got, "bytes held during the partition arrive after the heal")
	_ = c2.SetReadDeadline(time.Now().Add(2 * time.Second))
	got, err = r2.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "new\n", got)
	assert.Positive(t, p.Stats().Bytes)
}

func TestResetClosesAndRefusesConnections(t *testing.T) {
	noLeaks(t)
	p, err := New("c1->s1", echo(t))
	require.NoError(t, err)
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	_, err = roundTrip(c, r, "hello", 2*time.Second)
	require.NoError(t, err)

	p.Block(Reset)
	_, err = roundTrip(c, r, "after", 2*time.Second)
	require.Error(t, err, "an open connection is reset")
	assert.False(t, isTimeout(err), "a reset is noticed at once: %v", err)

	c2, err := net.Dial("tcp", p.Addr())
	if err == nil { // the kernel may complete the handshake before the proxy resets it
		_, err = roundTrip(c2, bufio.NewReader(c2), "x", 2*time.Second)
		c2.Close()
	}
	require.Error(t, err, "new connections are refused")
	assert.Equal(t, 2, p.Stats().Conns)
	assert.Equal(t, 1, p.Stats().Refused)

	p.Heal()
	c3, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c3.Close()
	got, err := roundTrip(c3, bufio.NewReader(c3), "healed", 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "healed\n", got)
}

func TestCloseReleasesAHangingLink(t *testing.T) {
	noLeaks(t)
	p, err := New("c1->s1", echo(t))
	require.NoError(t, err)
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	_, err = roundTrip(c, r, "one", 2*time.Second)
	require.NoError(t, err)
	p.Block(Hang)
	_, err = roundTrip(c, r, "two", 100*time.Millisecond)
	require.True(t, isTimeout(err))
	p.Close() // must not wait for a heal
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = r.ReadString('\n')
	assert.Error(t, err, "the connection ends with the proxy")
}

func TestOnlyLoopbackTargets(t *testing.T) {
	for _, target := range []string{"10.0.0.1:6379", "example.com:80", "6379"} {
		_, err := New("x", target)
		assert.Error(t, err, target)
	}
	p, err := New("x", "localhost:1")
	require.NoError(t, err)
	p.Close()
}

// TestDelayHoldsEachDirectionThenEnds: a delay of what the dialler sends
// holds a round trip that long; one of what the target sends back, too; the
// bytes keep their order; past its end the link is as fast as before.
func TestDelayHoldsEachDirectionThenEnds(t *testing.T) {
	noLeaks(t)
	p, err := New("c1->s1", echo(t))
	require.NoError(t, err)
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	got, err := roundTrip(c, r, "before", time.Second)
	require.NoError(t, err)
	assert.Equal(t, "before\n", got)

	const d = 300 * time.Millisecond
	for _, dir := range []struct {
		name         string
		forth, back  time.Duration
		until, after string
	}{{"to the target", d, 0, "a", "b"}, {"from the target", 0, d, "c", "d"}} {
		p.Delay(dir.forth, dir.back, time.Now().Add(2*d))
		start := time.Now()
		_, err := c.Write([]byte(dir.until + "1\n" + dir.until + "2\n"))
		require.NoError(t, err)
		_ = c.SetReadDeadline(time.Now().Add(5 * d))
		first, err := r.ReadString('\n')
		require.NoError(t, err, dir.name)
		second, err := r.ReadString('\n')
		require.NoError(t, err, dir.name)
		assert.GreaterOrEqual(t, time.Since(start), d, "%s: held", dir.name)
		assert.Equal(t, []string{dir.until + "1\n", dir.until + "2\n"}, []string{first, second}, "%s: in order", dir.name)
		time.Sleep(2 * d) // the delay ends
		start = time.Now()
		got, err := roundTrip(c, r, dir.after, time.Second)
		require.NoError(t, err)
		assert.Equal(t, dir.after+"\n", got)
		assert.Less(t, time.Since(start), d, "%s: no delay past its end", dir.name)
		p.Delay(0, 0, time.Time{}) // nothing set: the next direction alone
		p.mu.Lock()
		p.toTarget, p.fromTarget = 0, 0
		p.mu.Unlock()
	}
}
