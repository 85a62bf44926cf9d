package live

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/locklab/locklab/internal/tcpproxy"
)

// peerLinks carries the server-to-server traffic of an ensemble through
// proxies, one pair per directed link, so that a link can be cut (LIVE.md
// section 7). Server i's zoo.cfg names every other server j by the
// proxies of link i -> j: its quorum port (a follower dials its leader
// there) and its election port. Only a server's own line holds its real
// ports (it binds them).
//
// The election port needs one more step: when a server dials one with a
// higher id, that one closes the connection and dials back, to the
// address the first message carried — the dialler's own, real election
// address — which would bypass the proxies. A small forwarder in front of
// each election proxy rewrites that address to the proxy of the reverse
// link, so every election connection goes through a proxy too.
type peerLinks struct {
	quorum   map[[2]string]*tcpproxy.Proxy
	election map[[2]string]*tcpproxy.Proxy
	hello    map[[2]string]*rewriter
}

func newPeerLinks() *peerLinks {
	return &peerLinks{quorum: map[[2]string]*tcpproxy.Proxy{}, election: map[[2]string]*tcpproxy.Proxy{},
		hello: map[[2]string]*rewriter{}}
}

// add makes the proxies of link from -> to, whose real quorum and election
// addresses are given.
func (pl *peerLinks) add(from, to, quorumAddr, electionAddr string) error {
	l := [2]string{from, to}
	q, err := tcpproxy.New(from+"->"+to+" quorum", quorumAddr)
	if err != nil {
		return err
	}
	pl.quorum[l] = q
	e, err := tcpproxy.New(from+"->"+to+" election", electionAddr)
	if err != nil {
		return err
	}
	pl.election[l] = e
	rw, err := newRewriter(e.Addr(), func() string {
		if back := pl.hello[[2]string{to, from}]; back != nil {
			return back.addr()
		}
		return ""
	})
	if err != nil {
		return err
	}
	pl.hello[l] = rw
	return nil
}

// ports are the quorum and election ports server from dials for to.
func (pl *peerLinks) ports(from, to string) (int, int) {
	l := [2]string{from, to}
	return pl.quorum[l].Port(), pl.hello[l].port()
}

// cut hangs every connection server from opened to server to (both of its
// directions: a TCP connection cannot be cut one way), held until heal.
func (pl *peerLinks) cut(from, to string) bool {
	l := [2]string{from, to}
	if pl.quorum[l] == nil {
		return false
	}
	pl.quorum[l].Block(tcpproxy.Hang)
	pl.election[l].Block(tcpproxy.Hang)
	return true
}

func (pl *peerLinks) heal(from, to string) {
	l := [2]string{from, to}
	if pl.quorum[l] != nil {
		pl.quorum[l].Heal()
		pl.election[l].Heal()
	}
}

func (pl *peerLinks) close() {
	for _, rw := range pl.hello {
		rw.close()
	}
	for _, p := range pl.quorum {
		p.Close()
	}
	for _, p := range pl.election {
		p.Close()
	}
}

// rewriter forwards connections to target, rewriting the address in the
// first message of ZooKeeper's election protocol (int64 protocol version
// < 0, int64 server id, int32 length, "host:port") to reverse().
type rewriter struct {
	ln      *tcpproxy.Listener
	target  string
	reverse func() string
}

func newRewriter(target string, reverse func() string) (*rewriter, error) {
	ln, err := tcpproxy.Listen("election forwarder")
	if err != nil {
		return nil, err
	}
	rw := &rewriter{ln: ln, target: target, reverse: reverse}
	ln.Serve(func(c net.Conn) {
		if ln.Track(c) {
			ln.Go(func() { rw.serve(c) })
		}
	})
	return rw, nil
}

func (rw *rewriter) addr() string { return rw.ln.Addr() }
func (rw *rewriter) port() int    { return rw.ln.Port() }

func (rw *rewriter) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", rw.target)
	if err != nil {
		return
	}
	if !rw.ln.Track(s) {
		return
	}
	defer s.Close()
	if err := rw.hello(c, s); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(s, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, s); done <- struct{}{} }()
	<-done
}

// hello copies the first message from c to s with its address rewritten.
func (rw *rewriter) hello(c, s net.Conn) error {
	var head [8]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return err
	}
	if int64(binary.BigEndian.Uint64(head[:])) >= 0 { // the old protocol: the id alone, no address
		_, err := s.Write(head[:])
		return err
	}
	var idLen [12]byte
	if _, err := io.ReadFull(c, idLen[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(idLen[8:])
	if n > 4096 {
		return fmt.Errorf("election hello: address of %d bytes", n)
	}
	addr := make([]byte, n)
	if _, err := io.ReadFull(c, addr); err != nil {
		return err
	}
	if back := rw.reverse(); back != "" {
		// Several addresses are separated by '|' (protocol version 2);
		// every one becomes the reverse link's forwarder.
		parts := strings.Split(string(addr), "|")
		for i := range parts {
			parts[i] = back
		}
		addr = []byte(strings.Join(parts, "|"))
	}
	out := make([]byte, 0, 20+len(addr))
	out = append(out, head[:]...)
	out = append(out, idLen[:8]...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(addr)))
	out = append(out, addr...)
	_, err := s.Write(out)
	return err
}

func (rw *rewriter) close() { rw.ln.Close() }
