package live

import (
	"context"
	"fmt"
	"io"
	"log"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Registry is what the clients tell the observer: which client's session
// created each lock node, and which nodes a client deleted itself. A node
// that vanishes without its client's delete went with its session: the
// session expired.
type Registry struct {
	mu       sync.Mutex
	owners   map[string]owner
	deleting map[string]bool
}

type owner struct {
	client  string
	session int64
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{owners: map[string]owner{}, deleting: map[string]bool{}}
}

func (r *Registry) created(path, client string, session int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.owners[path] = owner{client, session}
}

func (r *Registry) released(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deleting[path] = true
}

// Expiry is a session expiry the observer saw: lock nodes of one session
// gone without a delete from their client.
type Expiry struct {
	Session int64
	Client  string // "" if locklab did not see which client created them
	Leader  string
	Nodes   []string
}

func (e Expiry) String() string {
	who := ""
	if e.Client != "" {
		who = " of " + e.Client
	}
	leader := e.Leader
	if leader == "" {
		leader = "(none answered srvr)"
	}
	return fmt.Sprintf("session %#x%s expired on leader %s (its ephemeral nodes vanished with no delete from its client: "+
		"ZooKeeper closed the session, seen by locklab's watch of /lock); node deleted: %s",
		e.Session, who, leader, strings.Join(e.Nodes, ", "))
}

// Observe watches /lock and every lock directory under it with a session of
// its own (not gated by faults) and calls seen for each session whose nodes
// vanished without a delete from their client, until ctx ends. It returns
// once the first watch is set (or ctx ends).
func (e *Ensemble) Observe(ctx context.Context, reg *Registry, seen func(Expiry)) error {
	conn, events, err := zk.Connect(e.Addrs(), max(e.opts.SessionTimeout, 4*time.Second), zk.WithLogger(log.New(io.Discard, "", 0)),
		zk.WithLogInfo(false))
	if err != nil {
		return fmt.Errorf("zookeeper observer: %w", err)
	}
	go func() {
		for range events {
		}
	}()
	ready := make(chan struct{})
	go func() {
		<-ctx.Done()
		conn.Close()
	}()
	go e.observe(ctx, conn, reg, seen, ready)
	select {
	case <-ready:
	case <-ctx.Done():
	}
	return nil
}

func (e *Ensemble) observe(ctx context.Context, conn *zk.Conn, reg *Registry, seen func(Expiry), ready chan struct{}) {
	var once sync.Once
	signal := func() { once.Do(func() { close(ready) }) }
	defer signal()
	for ctx.Err() == nil {
		if _, err := conn.Create("/lock", nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		break
	}
	known := map[string]bool{}
	var mu sync.Mutex
	for ctx.Err() == nil {
		dirs, _, ev, err := conn.ChildrenW("/lock")
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		for _, d := range dirs {
			mu.Lock()
			isNew := !known[d]
			known[d] = true
			mu.Unlock()
			if isNew {
				started := make(chan struct{})
				go e.watchDir(ctx, conn, "/lock/"+d, reg, seen, started)
				<-started
			}
		}
		signal()
		select {
		case <-ev:
		case <-ctx.Done():
		}
	}
}

// watchDir follows one lock directory's children and reports those that
// vanished without their client's delete, grouped by session.
func (e *Ensemble) watchDir(ctx context.Context, conn *zk.Conn, dir string, reg *Registry, seen func(Expiry), started chan struct{}) {
	var once sync.Once
	defer once.Do(func() { close(started) })
	var last []string
	for ctx.Err() == nil {
		children, _, ev, err := conn.ChildrenW(dir)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		once.Do(func() { close(started) })
		bySession := map[int64]*Expiry{}
		for _, name := range last {
			if slices.Contains(children, name) {
				continue
			}
			p := dir + "/" + name
			reg.mu.Lock()
			o, mine := reg.owners[p]
			deleted := reg.deleting[p]
			reg.mu.Unlock()
			if deleted || !mine {
				continue
			}
			x := bySession[o.session]
			if x == nil {
				x = &Expiry{Session: o.session, Client: o.client}
				bySession[o.session] = x
			}
			x.Nodes = append(x.Nodes, p)
		}
		if len(bySession) > 0 {
			leader := e.Leader()
			sessions := make([]int64, 0, len(bySession))
			for s := range bySession {
				sessions = append(sessions, s)
			}
			sort.Slice(sessions, func(i, j int) bool { return sessions[i] < sessions[j] })
			for _, s := range sessions {
				x := bySession[s]
				x.Leader = leader
				seen(*x)
			}
		}
		last = children
		select {
		case <-ev:
		case <-ctx.Done():
		}
	}
}
