package userlive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkObserver sees the session expiries of a user's ZooKeeper lock in a live
// run: with a session of its own (not gated by faults) it watches the
// children of each lock directory a client asked for (LockPath(key)),
// learns each child's owner session from its stat, and each client's
// sessions from the client's session events. A child that vanished went
// with its session, as far as the observer can tell, when its client made
// no call of its lock between a listing that showed the child (the client
// then in no call) and the listing without it: the user's lock deletes its
// nodes in its calls.
//
// What it cannot see: an expiry while the owner is in a call of its lock
// (in Acquire, say) is not recorded, and a node deleted by another client,
// or by a goroutine of the user's own, would be taken for an expiry. Its
// time is the observer's, a few milliseconds after the servers'. The
// simulated ensemble records expiries from the leader itself.
type zkObserver struct {
	ctx     context.Context
	stopped <-chan struct{} // closed when the run stops, before the clients' connections close
	addrs   []string
	timeout time.Duration

	mu       sync.Mutex
	conn     *zk.Conn // nil until start
	seen     func(zkExpiry)
	dirs     []string
	sessions map[int64]string    // session -> client
	conns    map[string]*zk.Conn // client -> its connection
	inCall   map[string]int      // client -> calls in progress
	calls    map[string]int      // client -> calls begun
	nodes    map[string]zkNode   // path -> what the observer knows of it
	expired  int
}

// zkNode is a lock node as the observer knows it.
type zkNode struct {
	session int64
	// quiet is the count of its client's calls at the last listing that
	// showed the node while the client was in no call (-1: none).
	quiet int
}

// zkExpiry is a session expiry the observer saw.
type zkExpiry struct {
	client  string
	session int64
	nodes   []string
}

func (x zkExpiry) String() string {
	return fmt.Sprintf("session %#x of %s expired (its ephemeral nodes vanished while %s made no call of its lock: "+
		"ZooKeeper closed the session, seen by locklab's watch of the lock directories); node deleted: %s",
		x.session, x.client, x.client, strings.Join(x.nodes, ", "))
}

// newZKObserver is the observer of an ensemble at addrs whose sessions
// last timeout; it records nothing once stopped is closed (the run stopped:
// the clients' sessions then close, and their nodes go with them).
func newZKObserver(ctx context.Context, stopped <-chan struct{}, addrs []string, timeout time.Duration) *zkObserver {
	return &zkObserver{ctx: ctx, stopped: stopped, addrs: addrs, timeout: timeout, sessions: map[int64]string{}, conns: map[string]*zk.Conn{},
		inCall: map[string]int{}, calls: map[string]int{}, nodes: map[string]zkNode{}}
}

// start connects the observer; seen is told of each expiry. It ends with
// the observer's context.
func (o *zkObserver) start(seen func(zkExpiry)) error {
	conn, events, err := zk.Connect(o.addrs, max(o.timeout, 4*time.Second), zk.WithLogger(log.New(io.Discard, "", 0)),
		zk.WithLogInfo(false))
	if err != nil {
		return fmt.Errorf("zookeeper observer: %w", err)
	}
	go func() {
		for range events {
		}
	}()
	go func() {
		<-o.ctx.Done()
		conn.Close()
	}()
	o.mu.Lock()
	o.conn, o.seen = conn, seen
	dirs := slices.Clone(o.dirs)
	o.mu.Unlock()
	for _, d := range dirs {
		go o.watchDir(d)
	}
	return nil
}

// follow reads a client's session events until its connection closes,
// noting each session it gets.
func (o *zkObserver) follow(client string, conn *zk.Conn, events <-chan zk.Event) {
	o.mu.Lock()
	o.conns[client] = conn
	o.mu.Unlock()
	for ev := range events {
		if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
			if id := conn.SessionID(); id != 0 {
				o.mu.Lock()
				o.sessions[id] = client
				o.mu.Unlock()
			}
		}
	}
}

// watch starts watching dir's children, once.
func (o *zkObserver) watch(dir string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if slices.Contains(o.dirs, dir) {
		return
	}
	o.dirs = append(o.dirs, dir)
	if o.conn != nil {
		go o.watchDir(dir)
	}
}

// enter marks client in a call of its lock; the function returned marks
// the call's end.
func (o *zkObserver) enter(client string) func() {
	o.mu.Lock()
	o.inCall[client]++
	o.calls[client]++
	o.mu.Unlock()
	return func() {
		o.mu.Lock()
		o.inCall[client]--
		o.mu.Unlock()
	}
}

func (o *zkObserver) expiries() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.expired
}

// clientOf names the client whose session s is ("" if none). Called with
// o.mu held.
func (o *zkObserver) clientOf(s int64) string {
	if c, ok := o.sessions[s]; ok {
		return c
	}
	for c, conn := range o.conns {
		if conn.SessionID() == s {
			o.sessions[s] = c
			return c
		}
	}
	return ""
}

func (o *zkObserver) watchDir(dir string) {
	o.mu.Lock()
	conn := o.conn
	o.mu.Unlock()
	var last []string
	for o.ctx.Err() == nil {
		// The clients' calls before the listing: a client in no call then
		// and in none since did not delete what the listing shows.
		before := o.quietClients()
		children, _, ev, err := conn.ChildrenW(dir)
		if errors.Is(err, zk.ErrNoNode) {
			// Not made yet: wait for it.
			if ok, _, ev, err := conn.ExistsW(dir); err == nil && !ok {
				o.await(ev)
				continue
			}
		}
		if err != nil {
			o.pause(20 * time.Millisecond)
			continue
		}
		o.look(dir, last, children, before)
		last = children
		o.await(ev)
	}
}

// quietClients are the clients in no call of their lock, each with the
// count of its calls so far.
func (o *zkObserver) quietClients() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]int{}
	for c, n := range o.calls {
		if o.inCall[c] == 0 {
			out[c] = n
		}
	}
	return out
}

// look compares a listing of dir's children with the one before; quiet are
// the clients in no call when the listing was asked for (quietClients).
func (o *zkObserver) look(dir string, last, children []string, quiet map[string]int) {
	for _, c := range children {
		p := dir + "/" + c
		o.mu.Lock()
		_, known := o.nodes[p]
		o.mu.Unlock()
		if known {
			continue
		}
		if ok, st, err := o.conn.Exists(p); err == nil && ok && st.EphemeralOwner != 0 {
			o.mu.Lock()
			o.nodes[p] = zkNode{session: st.EphemeralOwner, quiet: -1}
			o.mu.Unlock()
		}
	}
	o.mu.Lock()
	var gone []zkExpiry
	for _, c := range last {
		if slices.Contains(children, c) {
			continue
		}
		p := dir + "/" + c
		n, ok := o.nodes[p]
		delete(o.nodes, p)
		client := o.clientOf(n.session)
		if !ok || client == "" || o.inCall[client] > 0 || n.quiet != o.calls[client] {
			continue
		}
		i := slices.IndexFunc(gone, func(x zkExpiry) bool { return x.session == n.session })
		if i < 0 {
			gone = append(gone, zkExpiry{client: client, session: n.session})
			i = len(gone) - 1
		}
		gone[i].nodes = append(gone[i].nodes, p)
	}
	for _, c := range children {
		p := dir + "/" + c
		n, ok := o.nodes[p]
		if !ok {
			continue
		}
		if calls, ok := quiet[o.clientOf(n.session)]; ok {
			n.quiet = calls
		} else {
			n.quiet = -1
		}
		o.nodes[p] = n
	}
	select {
	case <-o.stopped:
		gone = nil
	default:
	}
	o.expired += len(gone)
	seen := o.seen
	o.mu.Unlock()
	for _, x := range gone {
		seen(x)
	}
}

func (o *zkObserver) await(ev <-chan zk.Event) {
	select {
	case <-ev:
	case <-o.ctx.Done():
	}
}

func (o *zkObserver) pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-o.ctx.Done():
	}
}
