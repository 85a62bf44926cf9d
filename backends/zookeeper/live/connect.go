package live

import (
	"fmt"
	"io"
	"log"
	"net"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/internal/netgate"
)

// Connect opens a go-zookeeper connection to the ensemble as a live client
// of the run opens it: through the client's gate d (a paused client sends
// and sees nothing, a cut link holds its bytes), trying the servers in
// locklab's order from the first-th on (zk1 is 0; see hosts), each attempt
// bounded by the connect timeout as the Java client's is, with the
// session timeout of the ensemble's options and the library's logging off.
// The events are the connection's session events: the caller must read
// them (the library drops the events nobody has read).
//
// The connection is the library's own, unwrapped: what a user's lock,
// written against *zk.Conn, is given live.
func (e *Ensemble) Connect(d *netgate.Dialer, first int) (*zk.Conn, <-chan zk.Event, error) {
	if first < 0 || first >= len(e.servers) {
		return nil, nil, fmt.Errorf("zookeeper: no server %d of %d", first+1, len(e.servers))
	}
	connect := e.opts.Timeouts().Connect
	dial := func(network, addr string, _ time.Duration) (net.Conn, error) { return d.Dial(network, addr, connect) }
	conn, events, err := zk.Connect(e.Addrs(), e.opts.SessionTimeout, zk.WithDialer(dial), zk.WithHostProvider(newHosts(e.Addrs(), first)),
		zk.WithLogger(log.New(io.Discard, "", 0)), zk.WithLogInfo(false))
	if err != nil {
		return nil, nil, fmt.Errorf("zookeeper: connect: %w", err)
	}
	return conn, events, nil
}
