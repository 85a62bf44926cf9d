package raftkv

import (
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// procTransport is the simulated Transport of one client: its requests are
// Request messages sent from the calling sim.Proc, its watchdog a process
// spawned on the client's node.
type procTransport struct {
	p       *sim.Proc // the client's main process
	servers []sim.NodeID
	stamps  bool   // stamp=client: tell truth of each stamp
	truth   *truth // the cluster's ground truth, told of client stamps
}

// Nodes is the number of raft nodes.
func (t *procTransport) Nodes() int { return len(t.servers) }

// Call sends req from env's process (a *sim.Proc) to node.
func (t *procTransport) Call(env lockapi.Env, node int, req Request, timeout time.Duration) (Response, error) {
	p := env.(*sim.Proc)
	if t.stamps {
		t.truth.stamped(req.Cmd, p.Node().Name(), p.World().Now())
	}
	body, err := p.Call(t.servers[node], req, timeout)
	if err != nil {
		return Response{}, err
	}
	return body.(Response), nil
}

// Go spawns fn as a process of the client's node.
func (t *procTransport) Go(name string, fn func(env lockapi.Env)) {
	t.p.Spawn(name, func(w *sim.Proc) { fn(w) })
}
