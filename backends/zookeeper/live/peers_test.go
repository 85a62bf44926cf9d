package live

import (
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hello is ZooKeeper's first election message: protocol version, server
// id, the length and text of the sender's election address.
func hello(version, sid int64, addr string) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(version))
	b = binary.BigEndian.AppendUint64(b, uint64(sid))
	b = binary.BigEndian.AppendUint32(b, uint32(len(addr)))
	return append(b, addr...)
}

// through sends msg and then "rest" through a rewriter whose reverse link is
// back, and returns what its target received.
func through(t *testing.T, back string, msg []byte) []byte {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	rw, err := newRewriter(ln.Addr().String(), func() string { return back })
	require.NoError(t, err)
	defer rw.close()
	c, err := net.Dial("tcp", rw.addr())
	require.NoError(t, err)
	_, err = c.Write(append(msg, "rest"...))
	require.NoError(t, err)
	c.(*net.TCPConn).CloseWrite()
	s, err := ln.Accept()
	require.NoError(t, err)
	defer s.Close()
	got, err := io.ReadAll(s)
	require.NoError(t, err)
	c.Close()
	return got
}

func TestTheElectionHelloCarriesTheReverseLinksAddress(t *testing.T) {
	for _, tc := range []struct {
		name     string
		msg, out []byte
	}{
		{"protocol 1", hello(-65536, 2, "127.0.0.1:3888"), hello(-65536, 2, "127.0.0.1:41000")},
		{"protocol 2, two addresses", hello(-65535, 3, "127.0.0.1:3888|127.0.0.1:3889"), hello(-65535, 3, "127.0.0.1:41000|127.0.0.1:41000")},
		{"old protocol: the id alone", binary.BigEndian.AppendUint64(nil, 7), binary.BigEndian.AppendUint64(nil, 7)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, append(tc.out, "rest"...), through(t, "127.0.0.1:41000", tc.msg))
		})
	}
}
