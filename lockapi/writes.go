package lockapi

import (
	"fmt"
	"slices"
	"time"
)

// AppliedWrite is one write a protected resource applied, as the resource
// recorded it in true time: the ground truth of the data, as Grant is of the
// locks. It is kept beside the history, never in it.
type AppliedWrite struct {
	// Resource names the resource that applied it ("storage": the storage
	// node; a system's own resource later: "database", "etcd").
	Resource string
	// Server is the node that applied it; Key the cell it set.
	Server, Key string
	// Client is the node that sent the write.
	Client string
	// Request identifies the request: a network that duplicates a message
	// makes the resource apply the same request again (same Request).
	Request uint64
	// Token is the fencing token the write presented (0: none).
	Token uint64
	// Value is the value written.
	Value int64
	// At is when the resource applied it.
	At time.Duration
	// Committed says the write took effect for good. The storage node has no
	// transactions: every write it applies is committed at once. A
	// transactional resource applies a write inside a transaction and
	// commits it (WriteLog.Commit) only if the transaction commits: a write
	// that never committed took no effect.
	Committed bool
	// CommittedAt is when it was committed.
	CommittedAt time.Duration
	// HasRead says the writer read Key from the resource before the write
	// (since its previous write of Key): the write's value is derived from
	// that read, Read, served at ReadAt. False for a blind write.
	HasRead bool
	Read    int64
	ReadAt  time.Duration

	// Parent is the index in the record (Writes) of the write whose value
	// the read returned: the write in force when the read was served (-1:
	// none, the initial value, or no read).
	Parent int
	// Reads counts the reads the resource served while this write was in
	// force (its value was read; a reply may still have been lost on its way).
	Reads int
	// Replaced is the index in the record of the write in force when this
	// one was committed, the write it overwrote (-1: none).
	Replaced int
}

func (w AppliedWrite) String() string {
	s := fmt.Sprintf("%s's write of %d to %q (request %d", w.Client, w.Value, w.Key, w.Request)
	if w.Token != 0 {
		s += fmt.Sprintf(", token %d", w.Token)
	}
	s += fmt.Sprintf(") applied at %.3fs", w.At.Seconds())
	if !w.Committed {
		s += " (never committed)"
	}
	if w.HasRead {
		s += fmt.Sprintf(", derived from its read of %d at %.3fs", w.Read, w.ReadAt.Seconds())
	}
	return s
}

// readNote is a client's latest read of a key, as the resource served it:
// the value and the write in force then (its index; -1: none).
type readNote struct {
	value  int64
	at     time.Duration
	parent int
}

type clientKey struct{ resource, key, client string }

// WriteLog collects the writes a protected resource applied, and the reads it
// served, in true time. A nil *WriteLog records nothing, so a resource calls
// it unconditionally. It is off until Record(true): a run that nobody audits
// against the resource's record spares its memory and time.
type WriteLog struct {
	on     bool
	writes []AppliedWrite
	reads  map[clientKey]readNote
	// inForce is the index of each key's committed write in force (the
	// value a read returns), by resource and key (client "").
	inForce map[clientKey]int
	// first is the index in writes of each request's first application, so
	// that a duplicate applies the same read.
	first map[uint64]int
	// commits are the indexes of the committed writes in commit order.
	commits []int
	stale   []StaleRead
}

// StaleRead is a read a resource served that returned a write other than the
// one in force: a replica that had not applied the latest write served it.
type StaleRead struct {
	Resource, Key, Client string
	Value                 int64
	At                    time.Duration
	// Returned is the index in the record of the write the read returned,
	// InForce that of the write in force then (-1: the initial value).
	Returned, InForce int
}

func (r StaleRead) String() string {
	return fmt.Sprintf("%q: %s's read of %d at %.3fs returned write %d of the record while write %d was in force",
		r.Key, r.Client, r.Value, r.At.Seconds(), r.Returned, r.InForce)
}

// StaleReads are the stale reads the resource served, in the order served.
func (l *WriteLog) StaleReads() []StaleRead {
	if l == nil {
		return nil
	}
	return slices.Clone(l.stale)
}

// NewWriteLog returns an empty log, not recording (Record).
func NewWriteLog() *WriteLog {
	return &WriteLog{}
}

// Record turns recording on or off (off by default, unlike a GrantLog: the
// reads the log notes are many).
func (l *WriteLog) Record(on bool) {
	if l != nil {
		l.on = on
	}
}

// Recording reports whether the log records what it is told.
func (l *WriteLog) Recording() bool { return l != nil && l.on }

// current is the index of key's write in force in resource (-1: none).
func (l *WriteLog) current(resource, key string) int {
	if i, ok := l.inForce[clientKey{resource: resource, key: key}]; ok {
		return i
	}
	return -1
}

// Read records that resource served client a read of key returning value at
// true time at. Only each client's latest read of a key is kept, as the read
// its next write of the key derives from.
func (l *WriteLog) Read(resource, key, client string, value int64, at time.Duration) {
	if !l.Recording() {
		return
	}
	l.ReadOf(resource, key, client, value, at, l.current(resource, key))
}

// ReadOf is Read of a read that returned the write at index parent (-1: the
// initial value), which need not be the write in force: a replica that has
// not applied the latest write serves a stale read.
func (l *WriteLog) ReadOf(resource, key, client string, value int64, at time.Duration, parent int) {
	if !l.Recording() {
		return
	}
	if l.reads == nil {
		l.reads = map[clientKey]readNote{}
	}
	if parent >= len(l.writes) {
		parent = -1
	}
	if cur := l.current(resource, key); parent != cur {
		l.stale = append(l.stale, StaleRead{Resource: resource, Key: key, Client: client, Value: value, At: at,
			Returned: parent, InForce: cur})
	}
	if parent >= 0 {
		l.writes[parent].Reads++
	}
	l.reads[clientKey{resource, key, client}] = readNote{value: value, at: at, parent: parent}
}

// ReadOwn records that resource served client a read of key returning
// value, its own write at index i (Applied's result), not yet committed, in
// its transaction: the read derives from what that write derived from (none
// for a blind write), and so does the client's next write of key, which
// supersedes it in the transaction.
func (l *WriteLog) ReadOwn(resource, key, client string, value int64, at time.Duration, i int) {
	if !l.Recording() || i < 0 || i >= len(l.writes) {
		return
	}
	ck := clientKey{resource, key, client}
	w := l.writes[i]
	if !w.HasRead {
		delete(l.reads, ck)
		return
	}
	if l.reads == nil {
		l.reads = map[clientKey]readNote{}
	}
	l.reads[ck] = readNote{value: value, at: at, parent: w.Parent}
}

// Applied records that server of resource applied client's write request of
// value to key with token at true time at, committed at once (committed) or
// pending its transaction's commit (Commit). It returns the write's index.
// The write derives from the client's latest read of key served before it
// (the same as the first application's for a duplicate of a request); the
// read is used up, so that a later blind write does not claim it.
func (l *WriteLog) Applied(resource, server, key, client string, request, token uint64, value int64, at time.Duration, committed bool) int {
	if !l.Recording() {
		return -1
	}
	w := AppliedWrite{Resource: resource, Server: server, Key: key, Client: client, Request: request, Token: token,
		Value: value, At: at, Parent: -1, Replaced: -1}
	if l.first == nil {
		l.first = map[uint64]int{}
	}
	if i, dup := l.first[request]; dup {
		f := &l.writes[i]
		w.HasRead, w.Read, w.ReadAt, w.Parent = f.HasRead, f.Read, f.ReadAt, f.Parent
	} else {
		ck := clientKey{resource, key, client}
		if r, ok := l.reads[ck]; ok {
			w.HasRead, w.Read, w.ReadAt, w.Parent = true, r.value, r.at, r.parent
			delete(l.reads, ck)
		}
		l.first[request] = len(l.writes)
	}
	l.writes = append(l.writes, w)
	i := len(l.writes) - 1
	if committed {
		l.Commit(i, at)
	}
	return i
}

// Commit records that the transaction of the write at index i (Applied's
// result) committed at true time at.
func (l *WriteLog) Commit(i int, at time.Duration) {
	if !l.Recording() || i < 0 || i >= len(l.writes) {
		return
	}
	w := &l.writes[i]
	w.Committed, w.CommittedAt, w.Replaced = true, at, l.current(w.Resource, w.Key)
	if l.inForce == nil {
		l.inForce = map[clientKey]int{}
	}
	l.inForce[clientKey{resource: w.Resource, key: w.Key}] = i
	l.commits = append(l.commits, i)
}

// Writes returns a copy of the record, in the order the writes were applied.
func (l *WriteLog) Writes() []AppliedWrite {
	if l == nil {
		return nil
	}
	return slices.Clone(l.writes)
}

// LostUpdate is a lost update in a resource's record: the write By derived
// its value from a read that did not see the committed write Lost, which was
// in force when the resource applied By: By overwrote it.
type LostUpdate struct {
	Lost, By AppliedWrite
}

func (u LostUpdate) String() string {
	return fmt.Sprintf("%q: %s overwrote %s, which its read had not seen", u.By.Key, u.By, u.Lost)
}

// LostUpdates are the lost updates of the record, in commit order: every
// committed write derived from a read (HasRead) whose write in force when it
// was committed is not the one its read returned (Parent), nor an earlier
// application of the same request (a duplicate re-applies a request without
// losing its own write). For a counter incremented under the lock
// (fenced-counter), the record has none exactly when the committed values
// are a +1 chain.
func (l *WriteLog) LostUpdates() []LostUpdate { return l.LostUpdatesWithout(nil) }

// LostUpdatesWithout is LostUpdates on the record without the writes skip
// names (by index in Writes; nil: none), as if the resource had never
// applied them: a write whose client never learnt it was applied and whose
// value nobody saw, say, which a history cannot tell from a write never
// applied. A read served while a skipped write was in force counts as a
// read of the write before it.
func (l *WriteLog) LostUpdatesWithout(skip func(i int, w AppliedWrite) bool) []LostUpdate {
	if l == nil {
		return nil
	}
	inForce := map[clientKey]int{}
	// instead maps a write left out to the write in force in its place: a
	// read served while it was in force returned that one, as if it had
	// never been applied.
	instead := map[int]int{}
	var out []LostUpdate
	for _, i := range l.commits {
		w := l.writes[i]
		k := clientKey{resource: w.Resource, key: w.Key}
		prev, ok := inForce[k]
		if !ok {
			prev = -1
		}
		if skip != nil && skip(i, w) {
			instead[i] = prev
			continue
		}
		inForce[k] = i
		parent := w.Parent
		for {
			j, left := instead[parent]
			if !left {
				break
			}
			parent = j
		}
		if !w.HasRead || prev == parent || (prev >= 0 && l.writes[prev].Request == w.Request) {
			continue
		}
		lost := AppliedWrite{Parent: -1, Replaced: -1}
		if prev >= 0 {
			lost = l.writes[prev]
		}
		out = append(out, LostUpdate{Lost: lost, By: w})
	}
	return out
}
