package zookeeper

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/internal/opt"
)

// Options configure an ensemble and the Curator-style lock recipe its
// clients run. Table declares them; start from DefaultOptions.
type Options struct {
	// Servers is the ensemble's size (3 or 5, any odd size up to 7).
	Servers int
	// SessionTimeout is how long the leader keeps a session without contact.
	SessionTimeout time.Duration
	// Tick is the ensemble's heartbeat tick (the leader heartbeats its followers
	// and checks sessions every tick).
	Tick time.Duration
	// ElectionTimeout is how long a follower goes without its leader before it
	// calls an election (randomized up to twice that).
	ElectionTimeout time.Duration
	// PingInterval is how often an idle client pings (0: session-timeout/3).
	PingInterval time.Duration
	// ReadTimeout is how long a client waits for any reply before it calls the
	// connection lost (0: session-timeout·2/3, as the ZooKeeper client does).
	ReadTimeout time.Duration
	// ConnectTimeout bounds one connection attempt (0: session-timeout/servers).
	ConnectTimeout time.Duration
	// Protection is Curator's protected mode: after a connection loss on
	// create, find and adopt the node carrying our guid instead of creating another.
	Protection bool
	// Herd makes waiters watch the lock's parent (every waiter wakes on every
	// change) instead of the next-lower node.
	Herd bool
	// OnSuspend is what the holder does on SUSPENDED: continue (believe it
	// holds until LOST) or stop (treat SUSPENDED as lost).
	OnSuspend string
	// Token is the fencing token of a grant: czxid or sequence.
	Token string
	// Sync issues a sync before listing the lock's children, so that a lagging
	// server catches up with the leader first.
	Sync bool
	// ReleaseRetry retries a delete that met a connection loss during release
	// (off: Curator's CURATOR-678 behaviour, the client forgets its node).
	ReleaseRetry bool
	// AdoptCheck, with protection, adopts a node only if its ephemeral owner is
	// the current session (off: CURATOR-604, a node of an expired session is
	// adopted while its deletion has not reached the server).
	AdoptCheck bool
	// Retries bounds Curator's retry loop on connection loss.
	Retries int
}

// On-suspend policies (Curator's ConnectionStateErrorPolicy).
const (
	SuspendContinue = "continue" // SessionConnectionStateErrorPolicy: only LOST ends the hold
	SuspendStop     = "stop"     // StandardConnectionStateErrorPolicy: SUSPENDED ends it
)

// Token kinds.
const (
	TokenCzxid    = "czxid"
	TokenSequence = "sequence"
)

// Table declares the options of the zookeeper system.
var Table = opt.Table[Options]{Owner: "zookeeper", Options: []opt.Option[Options]{
	opt.Var("servers", "ensemble size (odd)", "3", func(o *Options) *int { return &o.Servers }, opt.Range(1, 7)),
	opt.Var("session-timeout", "the leader expires a session after this long without contact, on its own clock", "10s",
		func(o *Options) *time.Duration { return &o.SessionTimeout }, opt.Positive),
	opt.Var("tick", "the ensemble's tick: leader heartbeats and session checks", "100ms",
		func(o *Options) *time.Duration { return &o.Tick }, opt.Positive),
	opt.Var("election-timeout", "a follower without its leader this long (randomized up to twice) calls an election", "1s",
		func(o *Options) *time.Duration { return &o.ElectionTimeout }, opt.Positive),
	opt.Var("ping-interval", "an idle client pings this often (0: session-timeout/3)", "0s",
		func(o *Options) *time.Duration { return &o.PingInterval }, opt.NonNegative),
	opt.Var("read-timeout", "no reply this long and the client calls the connection lost: SUSPENDED (0: session-timeout*2/3)", "0s",
		func(o *Options) *time.Duration { return &o.ReadTimeout }, opt.NonNegative),
	opt.Var("connect-timeout", "bound on one connection attempt (0: session-timeout/servers)", "0s",
		func(o *Options) *time.Duration { return &o.ConnectTimeout }, opt.NonNegative),
	opt.Var("protection", "Curator's protected mode: after a connection loss on create, adopt the node with our guid", "true",
		func(o *Options) *bool { return &o.Protection }, opt.Bool),
	opt.Var("herd", "waiters watch the lock's children (all wake on every change) instead of the next-lower node", "false",
		func(o *Options) *bool { return &o.Herd }, opt.Bool),
	opt.Var("on-suspend", "the holder on SUSPENDED: continue (holds until LOST, Curator's Session policy) or stop (Standard policy)", "continue",
		func(o *Options) *string { return &o.OnSuspend }, opt.Choice(SuspendContinue, SuspendStop)),
	opt.Var("token", "fencing token of a grant: czxid (the lock node's creation zxid) or sequence (its sequence number)", "czxid",
		func(o *Options) *string { return &o.Token }, opt.Choice(TokenCzxid, TokenSequence)),
	opt.Var("sync", "sync with the leader before listing the lock's children", "false",
		func(o *Options) *bool { return &o.Sync }, opt.Bool),
	opt.Var("release-retry", "retry a release's delete after a connection loss (false: CURATOR-678, the node stays)", "true",
		func(o *Options) *bool { return &o.ReleaseRetry }, opt.Bool),
	opt.Var("adopt-check", "protected mode adopts only a node owned by the current session (false: CURATOR-604)", "true",
		func(o *Options) *bool { return &o.AdoptCheck }, opt.Bool),
	opt.Var("retries", "Curator's retry loop: attempts after a connection loss", "3",
		func(o *Options) *int { return &o.Retries }, opt.Range(0, 100)),
}}

// DefaultOptions returns the declared defaults.
func DefaultOptions() Options { return Table.Defaults() }

// Validate reports options that contradict each other.
func (o Options) Validate() error {
	if o.Servers%2 == 0 {
		return fmt.Errorf("servers: %d is even (an ensemble has an odd size)", o.Servers)
	}
	return nil
}

// Timeouts are a client's timing, derived once from the options (the
// simulated handle and the live one, on go-zookeeper, use the same).
type Timeouts struct {
	// Ping is how often an idle client checks in: ping-interval, or a third
	// of the session timeout.
	Ping time.Duration
	// Read is how long a client waits for a reply before it calls the
	// connection lost (SUSPENDED): read-timeout, or two thirds of the session
	// timeout, as the ZooKeeper client (and go-zookeeper) derive it.
	Read time.Duration
	// Connect bounds one connection attempt: connect-timeout, or the session
	// timeout over the number of servers, as the ZooKeeper client derives it.
	Connect time.Duration
}

// Timeouts derives the client's timing from the options.
func (o Options) Timeouts() Timeouts {
	t := Timeouts{Ping: o.PingInterval, Read: o.ReadTimeout, Connect: o.ConnectTimeout}
	if t.Ping <= 0 {
		t.Ping = o.SessionTimeout / 3
	}
	if t.Read <= 0 {
		t.Read = o.SessionTimeout * 2 / 3
	}
	if t.Connect <= 0 {
		t.Connect = o.SessionTimeout / time.Duration(max(o.Servers, 1))
	}
	return t
}
