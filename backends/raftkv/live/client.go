package raftkvlive

import (
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/backends/raftkv"
	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/lockapi"
)

// NewClient returns a lock client for the client node env.Name(): the
// simulated raftkv client's recipe (raftkv.Client) over a transport to this
// cluster. watchEnv makes the Env of each watchdog goroutine (same node, own
// randomness).
func (c *Cluster) NewClient(env lockapi.Env, watchEnv func() lockapi.Env) *raftkv.Client {
	return raftkv.NewClient(env, &clientTransport{c: c, watchEnv: watchEnv}, c.opts.Options)
}

// clientTransport is the live raftkv.Transport: a request crosses the faultnet
// to the node (Cluster.Serve) and its answer back; a background routine is
// a goroutine with an Env of its own.
type clientTransport struct {
	c        *Cluster
	watchEnv func() lockapi.Env
}

// Nodes is the number of raft nodes.
func (t *clientTransport) Nodes() int { return len(t.c.nodes) }

// Call carries req from env's node to node and the answer back. A node that
// lost leadership after proposing the command answers Unknown: an error,
// as a timeout is.
func (t *clientTransport) Call(env lockapi.Env, node int, req raftkv.Request, timeout time.Duration) (raftkv.Response, error) {
	name := t.c.nodes[node].name
	r, err := faultnet.Call(t.c.net, env.Name(), name, req, timeout, func() Response { return t.c.Serve(name, req) })
	switch {
	case errors.Is(err, faultnet.ErrClosed):
		return raftkv.Response{}, fmt.Errorf("%w: %w", raftkv.ErrClosed, err)
	case err != nil:
		return raftkv.Response{}, err
	case r.Unknown != "":
		return raftkv.Response{}, errors.New(r.Unknown)
	}
	return r.Response, nil
}

// Go runs fn on a goroutine of its own, with a fresh Env of the client's node.
func (t *clientTransport) Go(_ string, fn func(env lockapi.Env)) {
	w := t.watchEnv()
	go fn(w)
}
