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
// or both. A dial waits for an open link within its timeout.
//
// This package is live-only: nothing simulated imports it.
package netgate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/locklab/locklab/backends/live/faultnet"
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
	if err := g.hold(ctx, d.client, server); err != nil {
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

// Conn is a connection held while its client is paused or its link is cut.
type Conn struct {
	net.Conn
	d      *Dialer
	server string
	once   sync.Once
	closed chan struct{}
}

// hold waits until the client runs and the link from -> to is open.
func (g *Conn) hold(ctx context.Context, from, to string) error {
	for {
		if err := g.d.net.Gate(g.d.client); err != nil {
			return ErrClosed
		}
		if !g.d.net.Blocked(from, to) {
			return nil
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

// Read reads from the server and hands the bytes (or the error) over once
// the client runs and the link server -> client is open.
func (g *Conn) Read(b []byte) (int, error) {
	n, err := g.Conn.Read(b)
	if herr := g.hold(context.Background(), g.server, g.d.client); herr != nil {
		return 0, herr
	}
	return n, err
}

// Write writes once the client runs and the link client -> server is open.
func (g *Conn) Write(b []byte) (int, error) {
	if err := g.hold(context.Background(), g.d.client, g.server); err != nil {
		return 0, err
	}
	return g.Conn.Write(b)
}

// Close closes the connection and releases its held I/O.
func (g *Conn) Close() error {
	g.once.Do(func() { close(g.closed) })
	return g.Conn.Close()
}
