package raftnode

import (
	"time"

	"github.com/locklab/locklab/sim"
)

// PendingTTL is how long a replica keeps the reply address of a proposal
// that has not applied: its client has long given up after that.
const PendingTTL = 30 * time.Second

// Request is a client's request a replica proposed and answers once its
// entry applies.
type Request struct {
	Msg  sim.Message   // the request, to reply to
	At   time.Duration // node monotonic time of the proposal
	Term uint64        // the term the replica had when it proposed
}

// Pending holds the requests a replica proposed and has not answered, by the
// key the service finds them again by when their entry applies.
type Pending[K comparable] map[K]Request

// Take removes and returns the request of k.
func (p Pending[K]) Take(k K) (Request, bool) {
	r, ok := p[k]
	if ok {
		delete(p, k)
	}
	return r, ok
}

// Purge forgets every request older than PendingTTL at now (monotonic).
func (p Pending[K]) Purge(now time.Duration) {
	for k, r := range p { // determinism:ok deleting stale entries; order cannot matter
		if now-r.At > PendingTTL {
			delete(p, k)
		}
	}
}

// Propose proposes data on replica r for the client request m, kept under k
// until its entry applies (Take finds it then). When r cannot propose (it
// does not lead), m is forgotten and the error returned: the caller answers
// it.
func (p Pending[K]) Propose(r *Replica, k K, m sim.Message, data []byte) error {
	p[k] = Request{Msg: m, At: r.node.Mono(), Term: r.Term()}
	if err := r.Propose(data); err != nil {
		delete(p, k)
		return err
	}
	return nil
}
