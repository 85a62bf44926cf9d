// Package locktest holds the locks users write that locklab's own tests run
// in more than one package (the simulated and the live tests of package
// userlock): written once, against userlock's interfaces, as a user would.
package locktest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/userlock"
)

// ZooKeeperRaw is a ZooKeeper lock as a user writes it against the raw API:
// an ephemeral sequential child of /locks/<key>; the lowest child holds; a
// waiter watches its predecessor. Its token is the child's sequence number
// plus one (tokens start at 1), carried when Fenced.
type ZooKeeperRaw struct {
	env    userlock.Env
	conn   userlock.ZooKeeper
	fenced bool
}

// NewZooKeeperRaw returns the lock of the client env over conn, with
// fencing tokens when fenced.
func NewZooKeeperRaw(env userlock.Env, conn userlock.ZooKeeper, fenced bool) *ZooKeeperRaw {
	return &ZooKeeperRaw{env: env, conn: conn, fenced: fenced}
}

var acl = zk.WorldACL(zk.PermAll)

// Acquire creates the client's child and waits until it is the lowest.
func (l *ZooKeeperRaw) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
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
			return userlock.Lease{}, fmt.Errorf("%s is gone: %w", ours, userlock.ErrNotAcquired)
		case i == 0:
			seq, _ := strconv.ParseUint(ours[len(ours)-10:], 10, 64)
			return userlock.Lease{Key: key, Owner: ours, Token: seq + 1, HasToken: l.fenced}, nil
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

// Release deletes the client's child.
func (l *ZooKeeperRaw) Release(lease userlock.Lease) error {
	switch err := l.conn.Delete(lease.Owner, -1); {
	case err == nil:
		return nil
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%s: %w", lease.Owner, userlock.ErrNotHeld)
	default:
		return fmt.Errorf("delete %s: %w: %w", lease.Owner, err, userlock.ErrUnknown)
	}
}
