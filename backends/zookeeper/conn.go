package zookeeper

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/sim"
)

// ErrForeignGoroutine is the error of a Conn call made from a goroutine the
// simulator does not run (one the user's code started): such a call must
// not touch the simulator, so it does nothing.
var ErrForeignGoroutine = errors.New("called from a goroutine the simulator does not run")

// Conn is the simulated go-zookeeper connection (github.com/go-zookeeper/zk
// v1.0.4's *zk.Conn) of one client process, for a user's own lock written
// against the raw ZooKeeper API: the same methods, arguments, replies and
// errors (zk.ErrNodeExists, zk.ErrNoNode, zk.ErrBadVersion, zk.ErrNotEmpty,
// zk.ErrSessionExpired, zk.ErrConnectionClosed, zk.ErrNoServer,
// zk.ErrInvalidPath ...), over the simulated ensemble's generic API
// (APIRequest).
//
// As go-zookeeper does, it keeps one session alive from a process of its
// own (the I/O process, cN/zk-io: a ping every third of the session
// timeout), calls the connection lost when a reply does not come within
// two thirds of the session timeout (pending requests fail with
// zk.ErrConnectionClosed; their outcome is unknown), reconnects to the next
// server with the same session and re-registers its watches there
// (SetWatches: those whose change it missed fire at once). When a server
// says the session expired, every watch gets an EventNotWatching carrying
// zk.ErrSessionExpired, State says StateExpired, and the next connection
// makes a new session: ephemeral nodes of the old one are gone. A request
// made while disconnected waits for the connection, as go-zookeeper's queue
// does, and fails with zk.ErrNoServer when a round of every server found
// none serving.
//
// Differences from go-zookeeper, and what the simulator cannot offer:
//   - Watch channels (ExistsW, GetW, ChildrenW) are real channels, buffered
//     (one event, then closed) and filled by the I/O process when the
//     server's watch event arrives. A simulated process cannot block on a
//     Go channel (the kernel does not control it: a bare <-ch stops the
//     whole simulation): wait on it with userlock.WaitEvent (which polls it
//     on the client's clock in the simulator and blocks on it live), or poll
//     Exists/Children with env.Sleep.
//   - Session events: go-zookeeper's Connect returns a channel of them; a
//     Conn has none. State and SessionID say where the session stands.
//   - Children come in an order of their own (a hash of the names), not
//     sorted: a real server returns them in no particular order, so a lock
//     that relies on the order is found out here too.
//   - ACLs are not modelled: a create needs at least one (as ZooKeeper
//     refuses none) and every node is world-accessible. Container and TTL
//     nodes, multi, sync, auth and Close are not offered.
//   - A request pending when the connection is lost fails at its own read
//     timeout, not at the moment another request found the connection lost.
//
// Only the client's process may call it: a call from any other goroutine
// returns ErrForeignGoroutine without touching the simulator and is
// reported to the Misconduct callback (at the time of the client's last
// proper call), from the client's process, at its next call or ping.
type Conn struct {
	h     *handle              // the session and connection, as the ensemble knows its clients'
	p     *sim.Proc            // the client's process: the only caller
	owner *sim.Owner[foulCall] // its goroutine, and the calls from others

	state      zk.State
	lastZxid   uint64
	lastPing   time.Duration
	cycles     int // rounds of every server that found none serving
	watchers   []watchReg
	misconduct func(call, detail string, at time.Duration)

	seenAt atomic.Int64 // the time of the last proper call (a foreign goroutine's call reads it)
}

type watchType int

const (
	watchData watchType = iota
	watchExist
	watchChild
)

type watchReg struct {
	path string
	typ  watchType
	ch   chan zk.Event
}

type foulCall struct {
	call, detail string
	at           time.Duration
}

// NewConn returns the simulated go-zookeeper connection of process p,
// which must be the one calling (p's own goroutine): its session is made
// in the background by its I/O process, as zk.Connect does. misconduct,
// when set, is told of every call from another goroutine.
func (e *Ensemble) NewConn(p *sim.Proc, misconduct func(call, detail string, at time.Duration)) *Conn {
	h := newHandle(p, e)
	e.clients[p.Node().Name()] = h
	c := &Conn{h: h, p: p, owner: sim.NewOwner[foulCall](), state: zk.StateDisconnected, misconduct: misconduct}
	p.Spawn(p.Name()+"/zk-io", c.loop)
	return c
}

// mine checks that the caller is the client's process.
func (c *Conn) mine(call string) error {
	if !c.owner.Mine() {
		at := time.Duration(c.seenAt.Load())
		c.owner.Note(foulCall{call: call, at: at,
			detail: fmt.Sprintf("%s called from a goroutine the simulator does not run (after the call at %v)", call, at)})
		return fmt.Errorf("zookeeper: %s: %w (only client %s's own process may call its connection)", call, ErrForeignGoroutine, c.h.p.Node().Name())
	}
	c.seenAt.Store(int64(c.p.World().Now()))
	c.report()
	return nil
}

// mineAt checks that the caller is the client's process, then the path, as
// go-zookeeper checks it before any request (sequential: a node whose name
// the server completes).
func (c *Conn) mineAt(call, path string, sequential bool) error {
	if err := c.mine(call); err != nil {
		return err
	}
	return validatePath(path, sequential)
}

// report hands the foreign calls noted so far to the misconduct callback,
// from a process of the simulator.
func (c *Conn) report() {
	foul := c.owner.Strays()
	if c.misconduct == nil {
		return
	}
	for _, f := range foul {
		c.misconduct(f.call, f.detail, f.at)
	}
}

// SessionID is the current session's id (0: none yet, or expired).
func (c *Conn) SessionID() int64 { return c.h.session }

// State is the session's state as go-zookeeper reports it:
// StateDisconnected, StateConnecting, StateHasSession, StateExpired.
func (c *Conn) State() zk.State { return c.state }

// loop is the I/O process: it connects, pings every ping interval, and
// hands the servers' watch events to the watches.
func (c *Conn) loop(io *sim.Proc) {
	for {
		c.report()
		if !c.h.connected {
			if c.h.busy {
				io.Sleep(10 * time.Millisecond)
				continue
			}
			c.connect(io)
			continue
		}
		epoch := c.h.epoch
		for c.h.epoch == epoch && c.h.connected {
			left := c.lastPing + c.h.tm.Ping - io.Mono()
			if left <= 0 {
				break
			}
			if m, ok := io.Recv(left); ok {
				c.event(m)
			}
		}
		if c.h.epoch == epoch && c.h.connected {
			c.ping(io)
		}
	}
}

// connect makes a connection: the current session resumed on the next
// server, or a new session once there is none. A round of every server
// without one serving counts a cycle and waits a second, as go-zookeeper does.
func (c *Conn) connect(p *sim.Proc) {
	h := c.h
	h.busy = true
	defer func() { h.busy = false }()
	c.state = zk.StateConnecting
	resumed := h.session != 0
	switch h.dial(p) {
	case CodeOK:
		c.lastPing = p.Mono()
		c.state = zk.StateHasSession
		if resumed {
			c.resetWatches(p)
		}
		return
	case CodeExpired:
		c.expire()
		return
	}
	c.cycles++
	c.state = zk.StateDisconnected
	p.Sleep(time.Second)
}

// resetWatches re-registers the watches on the server just connected to
// (go-zookeeper's sendSetWatches).
func (c *Conn) resetWatches(p *sim.Proc) {
	if len(c.watchers) == 0 {
		return
	}
	r := APIRequest{Op: OpSetWatches, RelativeZxid: c.lastZxid}
	for _, w := range c.watchers {
		list := &r.DataWatches
		switch w.typ {
		case watchExist:
			list = &r.ExistWatches
		case watchChild:
			list = &r.ChildWatches
		}
		if !slices.Contains(*list, w.path) {
			*list = append(*list, w.path)
		}
	}
	_, _ = c.send(p, r)
}

// ping checks in; no reply within the read timeout loses the connection.
func (c *Conn) ping(io *sim.Proc) {
	c.lastPing = io.Mono()
	roundTrip[Request, Response](c.h, io, Request{Op: OpPing}, c.disconnect, c.expire)
}

// event hands a server's watch event to the watches it fires.
func (c *Conn) event(m sim.Message) {
	ev, ok := m.Body.(WatchEvent)
	if !ok || !c.h.connected || m.From != c.h.servers[c.h.conn] {
		return // not on the connection the client has open
	}
	e := zk.Event{State: zk.StateSyncConnected, Path: ev.Path}
	var fires []watchType
	switch ev.Type {
	case "created":
		e.Type, fires = zk.EventNodeCreated, []watchType{watchExist}
	case "changed":
		e.Type, fires = zk.EventNodeDataChanged, []watchType{watchExist, watchData}
	case "children":
		e.Type, fires = zk.EventNodeChildrenChanged, []watchType{watchChild}
	case "deleted":
		e.Type, fires = zk.EventNodeDeleted, []watchType{watchExist, watchData, watchChild}
	default:
		return
	}
	c.watchers = slices.DeleteFunc(c.watchers, func(w watchReg) bool {
		if w.path != ev.Path || !slices.Contains(fires, w.typ) {
			return false
		}
		w.ch <- e
		close(w.ch)
		return true
	})
}

// disconnect closes the connection: the next request or the I/O process
// reconnects to the next server.
func (c *Conn) disconnect() {
	h := c.h
	if !h.connected {
		return
	}
	h.connected = false
	h.conn = (h.conn + 1) % len(h.servers)
	c.state = zk.StateDisconnected
}

// expire ends the session the server said is gone: every watch learns it.
func (c *Conn) expire() {
	h := c.h
	h.session, h.connected = 0, false
	c.lastZxid = 0
	c.state = zk.StateExpired
	for _, w := range c.watchers {
		w.ch <- zk.Event{Type: zk.EventNotWatching, State: zk.StateDisconnected, Path: w.path, Err: zk.ErrSessionExpired}
		close(w.ch)
	}
	c.watchers = nil
}

// do sends a request of the client's process once connected.
func (c *Conn) do(r APIRequest) (APIResponse, error) {
	p, h := c.p, c.h
	cycles := c.cycles
	for !h.connected {
		if c.cycles != cycles {
			return APIResponse{}, zk.ErrNoServer
		}
		if h.busy {
			p.Sleep(10 * time.Millisecond)
			continue
		}
		c.connect(p)
	}
	return c.send(p, r)
}

// send sends r on the current connection and waits at most the read timeout.
func (c *Conn) send(p *sim.Proc, r APIRequest) (APIResponse, error) {
	resp, got := roundTrip[APIRequest, APIResponse](c.h, p, r, c.disconnect, c.expire)
	switch got {
	case unanswered, notServing:
		return resp, zk.ErrConnectionClosed
	case sessionGone:
		return resp, zk.ErrSessionExpired
	}
	if resp.Zxid > 0 {
		c.lastZxid = resp.Zxid
	}
	return resp, codeError(resp.Code)
}

// codeError is the error go-zookeeper returns for a server's code.
func codeError(c Code) error {
	switch c {
	case CodeOK:
		return nil
	case CodeNoNode:
		return zk.ErrNoNode
	case CodeNodeExists:
		return zk.ErrNodeExists
	case CodeBadVersion:
		return zk.ErrBadVersion
	case CodeNotEmpty:
		return zk.ErrNotEmpty
	case CodeNoChildrenForEphemerals:
		return zk.ErrNoChildrenForEphemerals
	case CodeInvalidACL:
		return zk.ErrInvalidACL
	case CodeExpired:
		return zk.ErrSessionExpired
	}
	return fmt.Errorf("zookeeper: unknown code %q", c)
}

func stat(s APIStat) *zk.Stat {
	return &zk.Stat{Czxid: int64(s.Czxid), Mzxid: int64(s.Mzxid), Pzxid: int64(s.Pzxid), Ctime: s.Ctime, Mtime: s.Mtime,
		Version: s.Version, Cversion: s.Cversion, EphemeralOwner: s.EphemeralOwner, DataLength: s.DataLength,
		NumChildren: s.NumChildren}
}

func (c *Conn) watch(path string, t watchType) <-chan zk.Event {
	ch := make(chan zk.Event, 1)
	c.watchers = append(c.watchers, watchReg{path: path, typ: t, ch: ch})
	return ch
}

func (c *Conn) wallMillis() int64 { return int64(c.p.Wall() / time.Millisecond) }

// Create creates a node (flags zk.FlagEphemeral, zk.FlagSequence, or both;
// acl at least one entry, e.g. zk.WorldACL(zk.PermAll)) and returns its
// path, with the sequence number appended for a sequential node.
func (c *Conn) Create(path string, data []byte, flags int32, acl []zk.ACL) (string, error) {
	if err := c.mine("Create"); err != nil {
		return "", err
	}
	var eph, seq bool
	switch flags {
	case zk.FlagPersistent:
	case zk.FlagEphemeral:
		eph = true
	case zk.FlagSequence:
		seq = true
	case zk.FlagEphemeralSequential:
		eph, seq = true, true
	case zk.FlagContainer, zk.FlagTTL, zk.FlagPersistentSequentialWithTTL:
		return "", fmt.Errorf("zookeeper (simulated): create flag %d (container, TTL) is not modelled: %w", flags, zk.ErrInvalidFlags)
	default:
		return "", fmt.Errorf("invalid flag value: [%v]", flags)
	}
	if err := validatePath(path, seq); err != nil {
		return "", err
	}
	r, err := c.do(APIRequest{Op: OpCreate, Path: path, Data: data, Ephemeral: eph, Sequential: seq, ACLs: len(acl), Time: c.wallMillis()})
	return r.Path, err
}

// CreateProtectedEphemeralSequential creates an ephemeral sequential node
// whose name carries a guid ("_c_<guid>-" before the last element), and
// after a connection loss looks for it among the parent's children before
// creating again, as go-zookeeper does (three attempts). The guid comes from
// the client's random stream.
func (c *Conn) CreateProtectedEphemeralSequential(path string, data []byte, acl []zk.ACL) (string, error) {
	if err := c.mineAt("CreateProtectedEphemeralSequential", path, true); err != nil {
		return "", err
	}
	guid := fmt.Sprintf("%016x%016x", c.p.Rand().Uint64(), c.p.Rand().Uint64())
	parts := strings.Split(path, "/")
	parts[len(parts)-1] = "_c_" + guid + "-" + parts[len(parts)-1]
	root := strings.Join(parts[:len(parts)-1], "/")
	protected := strings.Join(parts, "/")
	var err error
	for range 3 {
		var r APIResponse
		r, err = c.do(APIRequest{Op: OpCreate, Path: protected, Data: data, Ephemeral: true, Sequential: true, ACLs: len(acl), Time: c.wallMillis()})
		switch err {
		case zk.ErrSessionExpired:
		case zk.ErrConnectionClosed:
			l, lerr := c.do(APIRequest{Op: OpGetChildren, Path: root})
			if lerr != nil {
				return "", lerr
			}
			for _, name := range l.Children {
				if strings.HasPrefix(name, "_c_") && len(name) >= 3+32 && name[3:3+32] == guid {
					return root + "/" + name, nil
				}
			}
		case nil:
			return r.Path, nil
		default:
			return "", err
		}
	}
	return "", err
}

// Delete deletes the node if its version is version (-1: any).
func (c *Conn) Delete(path string, version int32) error {
	if err := c.mineAt("Delete", path, false); err != nil {
		return err
	}
	_, err := c.do(APIRequest{Op: OpDelete, Path: path, Version: version})
	return err
}

// Exists says whether the node exists, with its stat.
func (c *Conn) Exists(path string) (bool, *zk.Stat, error) {
	if err := c.mineAt("Exists", path, false); err != nil {
		return false, nil, err
	}
	r, err := c.do(APIRequest{Op: OpExists, Path: path})
	if err == zk.ErrConnectionClosed {
		return false, nil, err
	}
	if err == zk.ErrNoNode {
		return false, stat(r.Stat), nil
	}
	return true, stat(r.Stat), err
}

// ExistsW is Exists setting a watch: the node's creation (if it does not
// exist), change or deletion fires it. See Conn on waiting for the channel.
func (c *Conn) ExistsW(path string) (bool, *zk.Stat, <-chan zk.Event, error) {
	if err := c.mineAt("ExistsW", path, false); err != nil {
		return false, nil, nil, err
	}
	r, err := c.do(APIRequest{Op: OpExists, Path: path, Watch: true})
	switch err {
	case nil:
		return true, stat(r.Stat), c.watch(path, watchData), nil
	case zk.ErrNoNode:
		return false, stat(r.Stat), c.watch(path, watchExist), nil
	}
	return false, nil, nil, err
}

// Get reads the node's data and stat.
func (c *Conn) Get(path string) ([]byte, *zk.Stat, error) {
	if err := c.mineAt("Get", path, false); err != nil {
		return nil, nil, err
	}
	r, err := c.do(APIRequest{Op: OpGetData, Path: path})
	if err == zk.ErrConnectionClosed {
		return nil, nil, err
	}
	return r.Data, stat(r.Stat), err
}

// GetW is Get setting a watch on the node's change or deletion.
func (c *Conn) GetW(path string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	if err := c.mineAt("GetW", path, false); err != nil {
		return nil, nil, nil, err
	}
	r, err := c.do(APIRequest{Op: OpGetData, Path: path, Watch: true})
	if err != nil {
		return nil, nil, nil, err
	}
	return r.Data, stat(r.Stat), c.watch(path, watchData), nil
}

// Set writes the node's data if its version is version (-1: any).
func (c *Conn) Set(path string, data []byte, version int32) (*zk.Stat, error) {
	if err := c.mineAt("Set", path, false); err != nil {
		return nil, err
	}
	r, err := c.do(APIRequest{Op: OpSetData, Path: path, Data: data, Version: version, Time: c.wallMillis()})
	if err == zk.ErrConnectionClosed {
		return nil, err
	}
	return stat(r.Stat), err
}

// Sync makes the server the client is connected to catch up with the
// leader before it answers, as go-zookeeper's Sync: a read after it sees
// every write committed before the Sync. It returns path (a node that does
// not exist is no error).
func (c *Conn) Sync(path string) (string, error) {
	if err := c.mineAt("Sync", path, false); err != nil {
		return "", err
	}
	r, err := c.do(APIRequest{Op: OpSync, Path: path})
	if err != nil {
		return "", err
	}
	return r.Path, nil
}

// Children lists the node's children's names, in no particular order (see
// Conn), with the node's stat.
func (c *Conn) Children(path string) ([]string, *zk.Stat, error) {
	if err := c.mineAt("Children", path, false); err != nil {
		return nil, nil, err
	}
	r, err := c.do(APIRequest{Op: OpGetChildren, Path: path})
	if err == zk.ErrConnectionClosed {
		return nil, nil, err
	}
	return unordered(r.Children), stat(r.Stat), err
}

// ChildrenW is Children setting a watch on the node's children (and on its
// deletion).
func (c *Conn) ChildrenW(path string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	if err := c.mineAt("ChildrenW", path, false); err != nil {
		return nil, nil, nil, err
	}
	r, err := c.do(APIRequest{Op: OpGetChildren, Path: path, Watch: true})
	if err != nil {
		return nil, nil, nil, err
	}
	return unordered(r.Children), stat(r.Stat), c.watch(path, watchChild), nil
}

// unordered puts names in the order of a hash of each: a real server lists
// children in no particular order.
func unordered(names []string) []string {
	if names == nil {
		return nil
	}
	h := func(s string) uint32 {
		f := fnv.New32a()
		f.Write([]byte(s))
		return f.Sum32()
	}
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int {
		ha, hb := h(a), h(b)
		switch {
		case ha < hb:
			return -1
		case ha > hb:
			return 1
		}
		return strings.Compare(a, b)
	})
	return out
}

// validatePath is go-zookeeper's check of a path, made before any request.
func validatePath(path string, sequential bool) error {
	if path == "" || path[0] != '/' {
		return zk.ErrInvalidPath
	}
	n := len(path)
	if n == 1 {
		return nil
	}
	if !sequential && path[n-1] == '/' {
		return zk.ErrInvalidPath
	}
	for i, w := 1, 0; i < n; i += w {
		r, width := utf8.DecodeRuneInString(path[i:])
		switch {
		case r == '\u0000':
			return zk.ErrInvalidPath
		case r == '/':
			if last, _ := utf8.DecodeLastRuneInString(path[:i]); last == '/' {
				return zk.ErrInvalidPath
			}
		case r == '.':
			last, lastWidth := utf8.DecodeLastRuneInString(path[:i])
			if last == '.' {
				last, _ = utf8.DecodeLastRuneInString(path[:i-lastWidth])
			}
			if last == '/' {
				if i+1 == n {
					return zk.ErrInvalidPath
				}
				if next, _ := utf8.DecodeRuneInString(path[i+w:]); next == '/' {
					return zk.ErrInvalidPath
				}
			}
		case r >= '\u0000' && r <= '\u001f', r >= '\u007f' && r <= '\u009f', r >= '\uf000' && r <= '\uf8ff', r >= '\ufff0' && r < '\uffff':
			return zk.ErrInvalidPath
		}
		w = width
	}
	return nil
}
