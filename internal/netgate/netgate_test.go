package netgate

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/faultnet"
)

// echo serves one echo server on loopback and returns its address.
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
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip writes one byte and reports whether its echo came back within d.
func roundTrip(c net.Conn, d time.Duration) bool {
	done := make(chan bool, 1)
	go func() {
		if _, err := c.Write([]byte{1}); err != nil {
			done <- false
			return
		}
		var b [1]byte
		_, err := io.ReadFull(c, b[:])
		done <- err == nil
	}()
	select {
	case ok := <-done:
		return ok
	case <-time.After(d):
		return false
	}
}

func TestAGatedConnectionIsHeldWhileItsClientIsPausedOrItsLinkCut(t *testing.T) {
	for _, tc := range []struct {
		name        string
		fault, heal func(n *faultnet.Net)
	}{
		{"client paused", func(n *faultnet.Net) { n.Pause("c1") }, func(n *faultnet.Net) { n.Resume("c1") }},
		{"client -> server cut", func(n *faultnet.Net) { n.Block("c1", "s1") }, func(n *faultnet.Net) { n.Unblock("c1", "s1") }},
		{"server -> client cut", func(n *faultnet.Net) { n.Block("s1", "c1") }, func(n *faultnet.Net) { n.Unblock("s1", "c1") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := echo(t)
			n := faultnet.New()
			defer n.Close()
			d := New(n, "c1", func(a string) (string, bool) { return "s1", a == addr })
			c, err := d.DialContext(context.Background(), "tcp", addr)
			require.NoError(t, err)
			defer c.Close()
			require.True(t, roundTrip(c, time.Second), "an open link carries bytes")
			tc.fault(n)
			held := make(chan bool, 1)
			go func() { held <- roundTrip(c, 5*time.Second) }()
			select {
			case <-held:
				t.Fatal("a byte went through while the fault lasted")
			case <-time.After(100 * time.Millisecond):
			}
			tc.heal(n)
			assert.True(t, <-held, "the held byte goes through after the fault")
		})
	}
}

func TestADialOfAnUnknownAddressOrOverACutLinkFails(t *testing.T) {
	addr := echo(t)
	n := faultnet.New()
	defer n.Close()
	d := New(n, "c1", func(a string) (string, bool) { return "s1", a == addr })
	_, err := d.DialContext(context.Background(), "tcp", "127.0.0.1:1")
	require.ErrorContains(t, err, "no server of this run")
	n.Block("c1", "s1")
	_, err = d.Dial("tcp", addr, 50*time.Millisecond)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// sink serves one server on loopback that sends every byte it receives to
// got, and returns its address.
func sink(t *testing.T, got chan<- byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var b [1]byte
		for {
			if _, err := c.Read(b[:]); err != nil {
				close(got)
				return
			}
			got <- b[0]
		}
	}()
	return ln.Addr().String()
}

func TestACutConnectionKeepsTheTimingOfATCPSocket(t *testing.T) {
	t.Run("a read starved by a cut ends at its deadline, and the held bytes are the next read's", func(t *testing.T) {
		addr := echo(t)
		n := faultnet.New()
		defer n.Close()
		d := New(n, "c1", func(a string) (string, bool) { return "s1", a == addr })
		c, err := d.DialContext(context.Background(), "tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		n.Block("s1", "c1")
		_, err = c.Write([]byte{7})
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
		var b [1]byte
		start := time.Now()
		_, err = c.Read(b[:])
		var ne net.Error
		require.ErrorAs(t, err, &ne)
		assert.True(t, ne.Timeout(), "the read times out: %v", err)
		assert.Less(t, time.Since(start), time.Second, "at its deadline, not at the heal")
		n.Unblock("s1", "c1")
		require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Second)))
		k, err := c.Read(b[:])
		require.NoError(t, err)
		assert.Equal(t, []byte{7}, b[:k], "the echo the cut held")
	})
	t.Run("a write over a cut returns at once, and its bytes arrive at the heal, after a close too", func(t *testing.T) {
		got := make(chan byte, 4)
		addr := sink(t, got)
		n := faultnet.New()
		defer n.Close()
		d := New(n, "c1", func(a string) (string, bool) { return "s1", a == addr })
		c, err := d.DialContext(context.Background(), "tcp", addr)
		require.NoError(t, err)
		n.Block("c1", "s1")
		start := time.Now()
		_, err = c.Write([]byte{1, 2})
		require.NoError(t, err)
		assert.Less(t, time.Since(start), 100*time.Millisecond, "the write goes into the send buffer")
		require.NoError(t, c.Close())
		_, err = c.Write([]byte{3})
		assert.ErrorIs(t, err, net.ErrClosed, "a closed connection takes no more writes")
		select {
		case b := <-got:
			t.Fatalf("byte %d went through the cut", b)
		case <-time.After(100 * time.Millisecond):
		}
		n.Unblock("c1", "s1")
		var delivered []byte
		for b := range got {
			delivered = append(delivered, b)
		}
		assert.Equal(t, []byte{1, 2}, delivered, "delivered in order at the heal, then the close")
	})
}
