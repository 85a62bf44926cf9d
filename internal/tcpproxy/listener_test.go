package tcpproxy

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListenerCloseEndsWhatItKept: Close closes the connections handle
// tracked and waits for the goroutines it started; a connection tracked
// after Close is closed at once.
func TestListenerCloseEndsWhatItKept(t *testing.T) {
	noLeaks(t)
	l, err := Listen("test")
	require.NoError(t, err)
	served := make(chan net.Conn, 1)
	l.Serve(func(c net.Conn) {
		if l.Track(c) {
			l.Go(func() {
				served <- c
				_, _ = c.Read(make([]byte, 1)) // until Close closes c
			})
		}
	})
	client, err := net.Dial("tcp", l.Addr())
	require.NoError(t, err)
	defer client.Close()
	var kept net.Conn
	select {
	case kept = <-served:
	case <-time.After(5 * time.Second):
		t.Fatal("the connection was not handed to handle")
	}
	assert.Equal(t, l.Port(), kept.LocalAddr().(*net.TCPAddr).Port)

	l.Close() // returns only once the reading goroutine has ended

	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = client.Read(make([]byte, 1))
	assert.Error(t, err, "the tracked connection is closed")
	late, other := net.Pipe()
	defer other.Close()
	assert.False(t, l.Track(late), "Track after Close")
	_, err = late.Write([]byte("x"))
	assert.Error(t, err, "Track closed the late connection")
	l.Close() // again: nothing more
}
