package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// ErrNoLeader means no member accepted the request within the retry budget
// and none of the attempts can have taken effect.
var ErrNoLeader = errors.New("no leader reachable")

// ErrLeaseGone means the request named a lease that no longer exists: it
// certainly did not take effect.
var ErrLeaseGone = errors.New(ErrLeaseNotFound)

// KVClient is the KV, lease and watch client of one client node (clientv3's
// Client): it finds the leader, retries requests across members within a
// budget and reports lockapi.ErrUnknown when an attempt timed out and none
// settled it. A retried write may apply twice, as with etcd. Its methods take
// the process that calls them, so a node's main process and its keep-alive
// process can share it.
type KVClient struct {
	members []sim.NodeID
	opts    Options
	leader  int
	watches uint64
}

func newKV(p *sim.Proc, members []sim.NodeID, o Options) *KVClient {
	return &KVClient{members: members, opts: o, leader: p.Rand().IntN(len(members))}
}

// Do sends cmd through the log (or, serializable, to one member) until a
// member answers, the retry budget is spent, or the command is refused.
func (c *KVClient) Do(p *sim.Proc, cmd Command, serializable bool) (Response, error) {
	until := p.Mono() + c.opts.RetryBudget
	var uncertain error
	for attempt := 1; ; attempt++ {
		target := c.leader
		body, err := p.Call(c.members[target], Request{Cmd: cmd, Serializable: serializable}, c.opts.RequestTimeout)
		switch {
		case err != nil:
			if !serializable {
				uncertain = err
			}
			c.leader = (target + 1) % len(c.members)
		case body.(Response).NotLeader:
			c.redirect(p, target, body.(Response).Leader)
		case body.(Response).Result.Err != "" && uncertain != nil:
			// This attempt certainly did nothing, but one that timed out
			// may have taken effect before the lease went: unknown.
			r := body.(Response)
			r.Retried = true
			return r, fmt.Errorf("etcd: %s: %d attempts, one timed out, the last refused (%w): %w: %w", describe(cmd),
				attempt, ErrLeaseGone, lockapi.ErrUnknown, uncertain)
		case body.(Response).Result.Err != "":
			r := body.(Response)
			return r, fmt.Errorf("etcd: %s: %w", describe(cmd), ErrLeaseGone)
		default:
			r := body.(Response)
			r.Retried = uncertain != nil
			return r, nil
		}
		if p.Mono() >= until {
			if uncertain != nil {
				return Response{}, fmt.Errorf("etcd: %s: %d attempts in %v, one timed out: %w: %w", describe(cmd), attempt,
					c.opts.RetryBudget, lockapi.ErrUnknown, uncertain)
			}
			return Response{}, fmt.Errorf("etcd: %s: %d attempts in %v: %w", describe(cmd), attempt, c.opts.RetryBudget, ErrNoLeader)
		}
	}
}

// CallLeader sends req (a request of the generic KV or lease API) to the
// member the client believes leads, following a NotLeader answer's hint
// and moving on from a member that does not answer within request-timeout,
// until a member answers (its reply is returned) or until passes on p's
// monotonic clock (context.DeadlineExceeded: the outcome is unknown). It is
// the leader search of the simulated clientv3 (package etcdclient).
func (c *KVClient) CallLeader(p *sim.Proc, req any, until time.Duration) (any, error) {
	for {
		left := until - p.Mono()
		if left <= 0 {
			return nil, context.DeadlineExceeded
		}
		target := c.leader
		body, err := p.Call(c.members[target], req, min(c.opts.RequestTimeout, left))
		if err != nil {
			c.leader = (target + 1) % len(c.members)
			continue
		}
		var notLeader bool
		var lead uint64
		switch r := body.(type) {
		case KVResponse:
			notLeader, lead = r.NotLeader, r.Leader
		case Response:
			notLeader, lead = r.NotLeader, r.Leader
		case KeepAliveResp:
			notLeader, lead = r.NotLeader, r.Leader
		case LeaseTTLResponse:
			notLeader, lead = r.NotLeader, r.Leader
		}
		if notLeader {
			c.redirect(p, target, lead)
			continue
		}
		return body, nil
	}
}

// redirect follows a NotLeader answer from target: to the leader it names,
// or to the next member after a short back-off.
func (c *KVClient) redirect(p *sim.Proc, target int, leader uint64) {
	if leader != 0 && int(leader-1) != target && int(leader) <= len(c.members) {
		c.leader = int(leader - 1)
		return
	}
	c.leader = (target + 1) % len(c.members)
	p.Sleep(lockapi.Backoff(p.Rand(), c.opts.BackoffMax))
}

func describe(cmd Command) string {
	switch cmd.Type {
	case CmdTxn:
		if len(cmd.Txn.If) == 0 && len(cmd.Txn.Then) == 1 {
			return fmt.Sprintf("%s %s", cmd.Txn.Then[0].Type, cmd.Txn.Then[0].Key)
		}
		return "txn"
	case CmdLeaseGrant:
		return "lease grant"
	}
	return fmt.Sprintf("%s %x", cmd.Type, cmd.Lease)
}

// Txn runs a transaction through the log.
func (c *KVClient) Txn(p *sim.Proc, t Txn) (Result, error) {
	r, err := c.Do(p, Command{Type: CmdTxn, Txn: t}, false)
	return r.Result, err
}

// Get reads with the configured consistency.
func (c *KVClient) Get(p *sim.Proc, op Op) (Result, error) {
	op.Type = OpGet
	r, err := c.Do(p, Command{Type: CmdTxn, Txn: Txn{Then: []Op{op}}}, c.opts.Reads == ReadsSerializable)
	return r.Result, err
}

// Grant creates a lease with ttl; the result carries its id and the TTL
// the server granted.
func (c *KVClient) Grant(p *sim.Proc, ttl time.Duration) (Result, error) {
	r, err := c.Do(p, Command{Type: CmdLeaseGrant, TTL: max(ttl, c.opts.MinTTL())}, false)
	return r.Result, err
}

// KeepAliveOnce renews lease at the leader: its TTL, or 0 when the lease is gone.
func (c *KVClient) KeepAliveOnce(p *sim.Proc, lease int64) (time.Duration, error) {
	until := p.Mono() + c.opts.RetryBudget
	for {
		target := c.leader
		body, err := p.Call(c.members[target], KeepAlive{Lease: lease}, c.opts.RequestTimeout)
		switch {
		case err != nil:
			c.leader = (target + 1) % len(c.members)
		case body.(KeepAliveResp).NotLeader:
			c.redirect(p, target, body.(KeepAliveResp).Leader)
		default:
			return body.(KeepAliveResp).TTL, nil
		}
		if p.Mono() >= until {
			return 0, fmt.Errorf("etcd: keep-alive %x: no answer in %v: %w", lease, c.opts.RetryBudget, lockapi.ErrUnknown)
		}
	}
}

// WaitDelete waits until key is deleted at a revision >= rev, watching it
// (clientv3's waitDelete), until the client's monotonic clock reaches until.
// The watch is registered at one member; when no event comes for
// watch-progress it is registered again at the next member, from the
// revision it had reached, so a member that crashed or fell behind loses
// nothing. It reports whether the deletion was seen.
func (c *KVClient) WaitDelete(p *sim.Proc, key string, rev int64, until time.Duration) bool {
	c.watches++
	id := c.watches
	var at []int
	defer func() {
		for _, m := range at {
			p.Send(c.members[m], WatchReq{ID: id}) // cancel
		}
	}()
	for p.Mono() < until {
		target := c.leader
		if _, err := p.Call(c.members[target], WatchReq{ID: id, Key: key, FromRev: rev}, c.opts.RequestTimeout); err != nil {
			c.leader = (target + 1) % len(c.members)
			continue
		}
		at = append(at, target)
		for p.Mono() < until {
			m, ok := p.Recv(min(c.opts.WatchProgress, until-p.Mono()))
			if !ok {
				c.leader = (target + 1) % len(c.members) // no progress: try another member
				break
			}
			ev, isWatch := m.Body.(WatchEvents)
			if !isWatch || ev.ID != id {
				continue // a late event of an earlier watch
			}
			for _, e := range ev.Events {
				if e.Type == EventDelete && e.KV.Key == key {
					return true
				}
				rev = max(rev, e.KV.ModRev+1)
			}
		}
	}
	return false
}

// MinTTL is the shortest lease the cluster grants (etcd raises a shorter
// TTL to it): the options' MinTTL.
func (c *KVClient) MinTTL() time.Duration { return c.opts.MinTTL() }
