// Package zklock is a ZooKeeper lock written against the raw API, as the
// recipe says: an ephemeral sequential child of /locks/<key>; the lowest
// child holds the lock; a waiter watches only its predecessor (no herd).
// Its fencing token is the child's sequence number plus one: the children
// are granted in sequence order, so tokens increase.
//
// The recipe's weakness: the lock is held as long as the session lives, and
// a paused or cut-off client cannot know when the ensemble expired its
// session. Without fencing, its writes after the expiry land over the next
// holder's. And a Release whose Delete goes unanswered (the server crashed)
// returns an unknown outcome and never tries again: the node stays, kept
// alive by the session, and every later waiter waits behind it (Curator
// retries that delete in the background until it succeeds).
//
// It is written against userlock.ZooKeeper, the go-zookeeper shape: the same
// code runs against locklab's simulated ensemble and, live, a *zk.Conn.
package zklock

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/userlock"
)

var acl = zk.WorldACL(zk.PermAll)

// Lock is one client's lock.
type Lock struct {
	env  userlock.Env
	conn userlock.ZooKeeper
}

// New returns the lock of the client env over the session conn.
func New(env userlock.Env, conn userlock.ZooKeeper) userlock.Lock {
	return &Lock{env: env, conn: conn}
}

// Acquire creates our child and waits until it is the lowest, or wait runs
// out (then it deletes the child).
func (l *Lock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	deadline := l.env.Mono() + wait
	dir := "/locks/" + key
	for _, p := range []string{"/locks", dir} {
		if _, err := l.conn.Create(p, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return userlock.Lease{}, fmt.Errorf("create %s: %w: %w", p, err, userlock.ErrNotAcquired)
		}
	}
	ours, err := l.conn.Create(dir+"/lock-", []byte(l.env.Name()), zk.FlagEphemeral|zk.FlagSequence, acl)
	if errors.Is(err, zk.ErrConnectionClosed) {
		return userlock.Lease{}, fmt.Errorf("create: %w: %w", err, userlock.ErrUnknown)
	}
	if err != nil {
		return userlock.Lease{}, fmt.Errorf("create: %w: %w", err, userlock.ErrNotAcquired)
	}
	giveUp := func(cause error) (userlock.Lease, error) {
		if err := l.conn.Delete(ours, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return userlock.Lease{}, fmt.Errorf("%w; delete %s: %w: %w", cause, ours, err, userlock.ErrUnknown)
		}
		return userlock.Lease{}, fmt.Errorf("%w: %w", cause, userlock.ErrNotAcquired)
	}
	for {
		children, _, err := l.conn.Children(dir)
		if err != nil {
			return giveUp(err)
		}
		slices.Sort(children)
		i := slices.Index(children, ours[len(dir)+1:])
		switch {
		case i < 0:
			return userlock.Lease{}, fmt.Errorf("%s is gone (the session expired): %w", ours, userlock.ErrNotAcquired)
		case i == 0:
			seq, _ := strconv.ParseUint(ours[len(ours)-10:], 10, 64)
			return userlock.Lease{Key: key, Owner: ours, Token: seq + 1, HasToken: true}, nil
		}
		exists, _, ch, err := l.conn.ExistsW(dir + "/" + children[i-1])
		if err != nil {
			return giveUp(err)
		}
		if !exists {
			continue
		}
		left := deadline - l.env.Mono()
		if left <= 0 {
			return giveUp(errors.New("wait budget spent"))
		}
		userlock.WaitEvent(l.env, ch, left)
	}
}

// Release deletes our child.
func (l *Lock) Release(lease userlock.Lease) error {
	switch err := l.conn.Delete(lease.Owner, -1); {
	case err == nil:
		return nil
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%s: %w", lease.Owner, userlock.ErrNotHeld)
	default:
		return fmt.Errorf("delete %s: %w: %w", lease.Owner, err, userlock.ErrUnknown)
	}
}
