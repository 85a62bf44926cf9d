package models

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/reuse"
)

// LockService checks the lock service's grants and releases against a model
// of a lock, per key: a (reentrant) mutex for locks without leases, or a
// lease-aware lock.
//
// Mutex: a grant is legal when the lock is free or already held by the same
// acquirer (a reentrant acquire, counted unless the lock is Uncounted); a
// release that succeeds is legal by the holder (it undoes one acquire) or
// on a free lock (it releases
// nobody's: a late release after a takeover and its release; RheaKV answers
// success to an unlock of a key that has no owner);
// nothing else ends a holding.
//
// Lease: as the mutex, and a grant to another acquirer is also legal once the
// holder's lease could have run out: the grant returned at or after the
// holder's lease deadline (the deadline recorded with its acquire or last
// renewal; a holder whose deadline is unknown may have lost its lease at any
// time). A renewal that succeeds is legal only for the holder. The check
// assumes the lock server's clock is true time and the recorded deadlines
// are no later than the server's expiry (a client that measures its lease
// from before its request): it judges the service against the leases its
// clients were told. A server whose clock jumps or drifts ahead hands the
// lock over too early, and this check says so. When the history shows the
// lock service itself ending the holder's hold before the grant, once its
// own promise had run out (a system event naming the holder's key and owner
// with the deadline the service promised, no later than the event:
// ZooKeeper's session expiry names the lock node it deleted and the leader's
// last contact plus the session timeout), the verdict is still invalid, since
// the lease the client counted on was broken, but it says whose promise
// broke: the client's, whose deadline outlived the hold the server gave it
// (Curator's on-suspend=continue counts the read timeout plus the session
// timeout).
//
// Failed operations change nothing and are always legal (a refused acquire is
// a matter of availability, not safety), but for a release that failed
// because the lock was no longer its owner's (its completion's detail says
// NotHeld: ZooKeeper's session expired and its lock node went with it, the
// key holds another's value): the owner had asked to let the lock go, and the
// answer says its hold had ended by then, so the owner's holding ends at some
// moment between the call and the answer, as with a release that succeeded
// (if another acquirer holds the lock by then, it changes nothing). A release
// that failed for any other reason leaves the owner holding. An acquire of unknown outcome is
// taken as not granted, unless its owner later releases or renews the lock,
// which proves the grant; a release of unknown outcome may take effect at any
// time after its call, or never. Renewals of unknown outcome are left out (a
// lease that was not extended only makes later grants easier).
//
// InOrder: the service applies each owner's acquires and releases in the
// order its client made them, refusing a request that a later one had
// superseded (raftkv's client sessions: a command whose sequence number is
// below its session's last is refused as stale). A release of unknown outcome
// then takes effect, if ever, before its owner's next acquire or release that
// returned ok: it cannot release a holding the owner took afterwards under
// the same name.
type LockService struct {
	// Leases selects the lease-aware model; otherwise the mutex model.
	Leases bool
	// InOrder says the service applies each owner's acquires and releases
	// in the order they were made (see LockService).
	InOrder bool
	// Uncounted says the lock does not count nested grants: a grant to the
	// holder is the same grant again, and one release frees the lock
	// (etcd's Mutex: a Lock whose session's key is already there returns
	// that key, and Unlock deletes it). Default: counted, as a reentrant
	// lock does (Redisson, Curator, RheaKV).
	Uncounted bool
	// Budget bounds the search. Default: DefaultSteps per key.
	Budget Budget
	// Grants is the servers' record of the run's grants (nil: a history
	// checked on its own). It never changes a verdict: an explanation reads
	// it to tell what the servers did that the history cannot show (a
	// reentrant lock's hold count).
	Grants []ServerGrant
}

// Name is "lease" or "mutex".
func (c LockService) Name() string {
	if c.Leases {
		return "lease"
	}
	return "mutex"
}

// Applies reports whether the history's grants have leases (for "lease") or
// none do (for "mutex").
func (c LockService) Applies(events []history.Event) (bool, string) {
	return c.appliesPaired(history.PairRecorded(events))
}

// appliesPaired is Applies from what pairing counted.
func (c LockService) appliesPaired(h *history.Paired) (bool, string) {
	a := h.Acquired()
	grants, leased := a.OK, a.Leased
	switch {
	case grants == 0:
		return false, "no acquire succeeded: no grant to judge"
	case c.Leases && leased == 0:
		return false, "the lock grants no leases (no acquire recorded a deadline)"
	case !c.Leases && leased > 0:
		return false, "the lock grants leases (acquires recorded deadlines): the lease check judges it"
	}
	return true, ""
}

// lockState is the lock as the model sees it. It holds no pointers: the
// holder is its owner's number (lockStep.ownerID) + 1.
type lockState struct {
	holder   int32 // 0 when free
	count    int
	deadline int64 // the holder's lease deadline (true time), when leased
	leased   bool
}

// hash is consistent with ==.
func (s lockState) hash() uint64 {
	h := mix(mix(fnvOffset, uint64(s.holder)), uint64(s.count))
	h = mix(h, uint64(s.deadline))
	if s.leased {
		h = mix(h, 1)
	}
	return h
}

// describe says what s is; nameOf names its holder.
func (s lockState) describe(nameOf func(holder int32) string) string {
	if s.holder == 0 {
		return "free"
	}
	out := "held by " + nameOf(s.holder)
	if s.count > 1 {
		out += fmt.Sprintf(" (%d acquires)", s.count)
	}
	if s.leased {
		out += ", lease until " + history.FormatTime(s.deadline)
	}
	return out
}

type lockKind uint8

const (
	lockGrant lockKind = iota
	lockRelease
	lockMaybeRelease
	lockRenew
	// lockGone is a release that failed because the lock was no longer its
	// owner's (NotHeld): it ends the owner's holding, if it still lasts.
	lockGone
)

// NotHeld is the text of the error a lock client gives when a release (or
// renewal) finds the lock no longer held by its acquirer
// (lockapi.ErrNotHeld), which the completion's detail of a failed release
// carries: the lock model ends the owner's holding at such a release.
const NotHeld = "lock not held by this acquirer"

// releaseGone reports whether o is a release that failed because the lock
// was no longer its owner's.
func releaseGone(o op) bool {
	return o.Func() == history.FRelease && o.Outcome() == history.Fail && strings.Contains(o.Completion.Detail, NotHeld)
}

// lockStep is the input of a lock operation.
type lockStep struct {
	kind   lockKind
	leased bool
	// phantom: an acquire of unknown outcome, proven by a later operation of
	// its owner.
	phantom bool
	// ownerID numbers owner among the owners of the key's steps (lockOps).
	ownerID  int32
	owner    string
	deadline int64
	// latest is the latest true time the operation can have taken effect.
	latest int64
	o      op
	// proof is the operation that proves a phantom grant.
	proof *op
	// nextOwn is the invocation of the owner's next operation on the key
	// after this one (MaxInt64 if none).
	nextOwn int64
}

// holder is the lockState.holder of the operation's owner.
func (in *lockStep) holder() int32 { return in.ownerID + 1 }

func (in lockStep) who() string {
	if in.o.Invoke.Node != "" {
		return in.o.Invoke.Node
	}
	return fmt.Sprintf("p%d", in.o.Invoke.Process)
}

func (in lockStep) String() string {
	var s string
	at := fmt.Sprintf("invoked %s", history.FormatTime(in.o.Invoke.Time))
	if in.o.Completion != nil && !in.phantom {
		at += ", returned " + history.FormatTime(in.o.Completion.Time)
	}
	switch in.kind {
	case lockGrant:
		s = fmt.Sprintf("%s was granted the lock as %s (%s)", in.who(), in.owner, at)
		if in.phantom {
			s = fmt.Sprintf("%s's acquire as %s had an unknown outcome (%s) but %s later %s it, so it was granted",
				in.who(), in.owner, at, in.who(), pastTense(in.proof.Invoke.F))
		}
		if in.leased {
			s += ", lease until " + history.FormatTime(in.deadline)
		}
	case lockRelease:
		s = fmt.Sprintf("%s's release as %s succeeded (%s)", in.who(), in.owner, at)
	case lockMaybeRelease:
		s = fmt.Sprintf("%s's release as %s had an unknown outcome (%s)", in.who(), in.owner, at)
	case lockGone:
		s = fmt.Sprintf("%s's release as %s failed because the lock was no longer its own (%s)", in.who(), in.owner, at)
	case lockRenew:
		s = fmt.Sprintf("%s's lease as %s was renewed until %s (%s)", in.who(), in.owner, history.FormatTime(in.deadline), at)
	}
	return s
}

func pastTense(f string) string {
	if strings.HasSuffix(f, "e") {
		return f + "d"
	}
	return f + "ed"
}

// noStates is the empty set of lock states, boxed once.
var noStates any = &lockSet{}

// lockSet is a state of the lock model: the lock states the lock may be in.
// A pointer to it is a state without an allocation of its own, and the lock
// states are values (no boxing).
type lockSet struct{ states []lockState }

// lockStates are the lock states of a model state: a *lockSet, or the
// []any of lockState a start operation carries (which analyze starts from).
func lockStates(state any) []lockState {
	if s, ok := state.(*lockSet); ok {
		return s.states
	}
	var out []lockState
	for _, x := range state.([]any) {
		out = append(out, x.(lockState))
	}
	return out
}

// step appends to out the states the lock may be in after in from the state
// s, unless out holds them already: the nondeterministic step of the lock
// models.
func (c LockService) step(out []lockState, s lockState, in *lockStep) []lockState {
	switch in.kind {
	case lockGrant:
		fresh := lockState{holder: in.holder(), count: 1, deadline: in.deadline, leased: in.leased}
		expired := c.Leases && (!s.leased || in.latest >= s.deadline)
		switch {
		case s.holder == 0:
			return appendState(out, fresh)
		case s.holder == in.holder():
			again := s
			if !c.Uncounted {
				again.count++
			}
			if in.leased {
				again.deadline, again.leased = in.deadline, true
			}
			out = appendState(out, again)
			if expired {
				out = appendState(out, fresh)
			}
			return out
		case expired:
			return appendState(out, fresh)
		}
		return out
	case lockRelease, lockMaybeRelease:
		if in.kind == lockMaybeRelease || s.holder == 0 {
			out = appendState(out, s) // a release of a free lock releases nobody's
		}
		if s.holder == in.holder() {
			r := s
			if r.count--; r.count <= 0 {
				r = lockState{}
			}
			out = appendState(out, r)
		}
		return out
	case lockGone:
		if s.holder == in.holder() {
			return appendState(out, lockState{}) // the whole hold ended, however reentrant
		}
		return appendState(out, s)
	case lockRenew:
		if s.holder != in.holder() {
			return out
		}
		r := s
		r.deadline, r.leased = in.deadline, true
		return appendState(out, r)
	}
	panic(fmt.Sprintf("unknown lock step %d", in.kind))
}

// appendState adds x to the set out, keeping the order in which the states
// were first found.
func appendState(out []lockState, x lockState) []lockState {
	if slices.Contains(out, x) {
		return out
	}
	return append(out, x)
}

// model is the lock model: Porcupine's power-set construction
// (NondeterministicModel.ToModel) of the nondeterministic step, written out
// (the same sets in the same order, the same equality): its state is the
// set of lock states the lock may be in. A buffered model carves the sets
// from blocks and reuses its scratch space, so that a step allocates
// nothing of its own: one search at a time may use it (Porcupine's parallel
// partitions need an unbuffered one).
func (c LockService) model(buffered bool, nameOf func(holder int32) string) porcupine.Model {
	if buffered {
		return c.modelIn(new(lockScratch), nameOf)
	}
	return c.modelIn(nil, nameOf)
}

// modelIn is the lock model, buffered in sc (nil: unbuffered); nameOf names
// the holders in descriptions.
func (c LockService) modelIn(sc *lockScratch, nameOf func(holder int32) string) porcupine.Model {
	buffered := sc != nil
	var scratch []lockState
	keep := func(states []lockState) *lockSet {
		if !buffered {
			return &lockSet{states: slices.Clone(states)}
		}
		set := sc.sets.carve(1)
		set[0] = lockSet{states: sc.slabs.carve(len(states))}
		copy(set[0].states, states)
		return &set[0]
	}
	return porcupine.Model{
		Init: func() any { return &lockSet{states: []lockState{{}}} },
		Step: func(state, input, _ any) (bool, any) {
			states := lockStates(state)
			next := scratch[:0]
			if s, ok := input.(startOp); ok {
				if len(states) > 0 {
					for _, x := range s.state.([]any) {
						next = appendState(next, x.(lockState))
					}
				}
			} else {
				in := input.(*lockStep)
				for _, st := range states {
					next = c.step(next, st, in)
				}
			}
			if buffered {
				scratch = next[:0]
			}
			if len(next) == 0 {
				return false, noStates
			}
			return true, keep(next)
		},
		Equal: func(a, b any) bool {
			x, y := lockStates(a), lockStates(b)
			if len(x) != len(y) {
				return false
			}
			for _, s := range x {
				if !slices.Contains(y, s) {
					return false
				}
			}
			return true
		},
		Hash: func(state any) uint64 {
			var h uint64
			for _, s := range lockStates(state) {
				h ^= s.hash()
			}
			return h
		},
		DescribeOperation: func(input, _ any) string {
			if s, ok := input.(startOp); ok {
				return "before: " + describeLockStates(lockStates(s.state), nameOf)
			}
			return input.(*lockStep).String()
		},
		DescribeState: func(state any) string {
			var descriptions []string
			for _, s := range lockStates(state) {
				descriptions = append(descriptions, s.describe(nameOf))
			}
			return fmt.Sprintf("{%s}", strings.Join(descriptions, ", "))
		},
	}
}

func describeLockStates(states []lockState, nameOf func(holder int32) string) string {
	parts := make([]string, len(states))
	for i, s := range states {
		parts[i] = s.describe(nameOf)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "one of {" + strings.Join(parts, "; ") + "}"
}

// spec is the search spec of one key's operations.
func (c LockService) spec(ops []linOp) searchSpec { return c.specIn(ops, new(lockScratch)) }

// specIn is spec with the model's states carved from sc.
func (c LockService) specIn(ops []linOp, sc *lockScratch) searchSpec {
	return searchSpec{model: c.modelIn(sc, holderNames(ops)), settle: func(_ any, _ []linOp, last linOp) any {
		in := last.input.(*lockStep)
		return []any{lockState{holder: in.holder(), count: 1, deadline: in.deadline, leased: in.leased}}
	}, order: c.orderFor(ops), batches: &sc.batches}
}

// holderNames names the holders of the lock states of ops' model (the
// owners of its steps), made on first use: only descriptions need them.
func holderNames(ops ...[]linOp) func(holder int32) string {
	var names []string
	return func(holder int32) string {
		if names == nil {
			for _, part := range ops {
				for _, o := range part {
					in := o.input.(*lockStep)
					if int(in.ownerID) >= len(names) {
						names = append(names, make([]string, int(in.ownerID)+1-len(names))...)
					}
					names[in.ownerID] = in.owner
				}
			}
		}
		if holder <= 0 || int(holder) > len(names) {
			return ""
		}
		return names[holder-1]
	}
}

// orderFor returns the order of a key's operations. With leases, a grant can
// be placed before or after another only when every grant of the key has a
// deadline later than its return (true of any recorder that measures the
// lease from before its request) and none is a phantom: otherwise a chain of
// takeovers could end a holding at any time, and grants get no order.
func (c LockService) orderFor(ops []linOp) func(x, y linOp) int {
	grantsOrdered := true
	for _, o := range ops {
		in := o.input.(*lockStep)
		if in.kind == lockGrant && c.Leases && (in.phantom || !in.leased || in.deadline <= in.latest) {
			grantsOrdered = false
		}
	}
	return func(x, y linOp) int { return c.order(x, y, grantsOrdered) }
}

// order places an operation y concurrent with a fresh grant x to acquirer A:
//
//   - a release or renewal by another acquirer is illegal once A holds the
//     lock, so it precedes x (an unknown release, or one that failed because
//     the lock was no longer its owner's, does nothing after x);
//   - a grant to another acquirer B cannot precede x when B's holding cannot
//     end before x: B acts again only after x returned and (with leases) B's
//     lease outlasts x's latest moment. Then it follows x.
//   - symmetrically, it cannot follow x when A's holding cannot end before
//     it. Then it precedes x (if it can do neither, the history is illegal
//     and the batch's search says so).
//
// A chain of takeovers cannot end a holding earlier: each takeover needs a
// grant returning after the deadline it overrides, so later than the
// operation it would make room for (see orderFor).
func (c LockService) order(x, y linOp, grantsOrdered bool) int {
	xi, yi := x.input.(*lockStep), y.input.(*lockStep)
	if yi.owner == xi.owner {
		return 0
	}
	switch yi.kind {
	case lockRelease, lockRenew, lockMaybeRelease, lockGone:
		return -1
	case lockGrant:
		if !grantsOrdered || yi.phantom {
			return 0
		}
		if xi.nextOwn > y.ret && (!c.Leases || xi.deadline > yi.latest) {
			return -1
		}
		if yi.nextOwn > x.ret && (!c.Leases || yi.deadline > xi.latest) {
			return 1
		}
	}
	return 0
}

// lockOps turns one key's operations into search operations. A grant is
// forcing when it is its owner's first operation on the key: whatever the
// state before it, the lock is then held once, by that owner.
func (c LockService) lockOps(ops []op) []linOp { return c.lockOpsIn(ops, new(lockScratch)) }

// ownerOps are an owner's first operation and last proving or releasing
// operation on a key (invoke indexes), and the next one while lockOps walks
// them backwards; nextOK is the position in lockOps' output of the owner's
// next acquire or release that returned ok (-1: none yet).
type ownerOps struct {
	first, last, next int64
	nextOK            int
}

// lockScratch is the memory of a LockService check: the search operations
// of a key and the states of its search, reused by the next key, and by the
// next check once the verdict keeps nothing of them (lockScratches).
type lockScratch struct {
	all       []op // the operations of every key
	index     map[string]int32
	owners    []ownerOps
	later     []int32 // lockOpsIn's steps to finish after its pass
	out       []linOp
	steps     []lockStep
	stepOwner []int32
	slabs     blocks[lockState]
	sets      blocks[lockSet]
	batches   batchScratch
}

// lockScratches keeps the scratch of LockService checks for the next one
// (an invalid verdict's once its visualization is released: withScratch).
var lockScratches reuse.Pool[lockScratch]

// reset makes the whole of sc free for the next key's operations and search.
func (sc *lockScratch) reset() {
	sc.slabs.reset()
	sc.sets.reset()
}

// lockOpsIn is lockOps in sc's memory: the operations (and their inputs)
// are valid until the next call with sc.
//
// One pass over ops builds the search operations: a long history's events
// are far apart in memory, and a second pass would miss the cache on every
// one of them again. What only the whole pass knows is filled in after it:
// the until of a release of unknown outcome (its owner's last operation), and
// the owner number of a phantom grant whose owner had no operation of its own
// before it (owners are numbered in the order their names first appear among
// the operations' own holders, phantom owners not seen so after all of them).
func (c LockService) lockOpsIn(ops []op, sc *lockScratch) []linOp {
	if sc.index == nil {
		sc.index = make(map[string]int32, len(ops)/2)
	}
	index := sc.index
	clear(index)
	owners := reuse.Room(sc.owners, len(ops)/2)
	out := reuse.Room(sc.out, len(ops))
	steps := reuse.Room(sc.steps, len(ops)) // the inputs of out, one each
	stepOwner := reuse.Room(sc.stepOwner, len(ops))
	later := reuse.Room(sc.later, 8) // steps to finish after the pass
	defer func() {
		sc.owners, sc.out, sc.steps, sc.stepOwner, sc.later = owners, out, steps, stepOwner, later
	}()
	for i, o := range ops {
		if !c.relevant(o) {
			continue // a read or write, whose events the model never looks at
		}
		acquire := o.Func() == history.FAcquire
		var name string
		if acquire && o.Completion != nil {
			name = holderOf(o.Completion)
		} else {
			name = holderOf(o.Invoke)
		}
		call := int64(o.Invoke.Index)
		k, ok := index[name]
		if !ok {
			k = int32(len(owners))
			index[name] = k
			owners = append(owners, ownerOps{first: call, next: -1, nextOK: -1})
		}
		if !acquire {
			owners[k].last = call
		}
		in := lockStep{o: o, latest: math.MaxInt64, owner: name}
		l := linOp{call: call, client: o.Invoke.Process}
		if o.Completion != nil {
			in.latest = o.Completion.Time
			l.ret = int64(o.Completion.Index)
		}
		finish := false
		switch outcome := o.Outcome(); {
		case acquire && outcome == history.OK:
			in.kind = lockGrant
			if o.Completion.Deadline != nil {
				in.deadline, in.leased = *o.Completion.Deadline, true
			}
			l.forcing = owners[k].first == call
		case acquire && outcome == history.Info && o.Invoke.Owner != "":
			proof := c.proof(ops[i+1:], o.Invoke.Owner, o.Invoke.Key)
			if proof == nil {
				continue
			}
			in.kind, in.owner, in.phantom, in.proof = lockGrant, o.Invoke.Owner, true, proof
			l.ret, in.latest = int64(proof.Invoke.Index), proof.Invoke.Time
			// The owner of the invoke, not of the (info) completion: numbered
			// after the pass when its name has not appeared yet.
			k, ok = index[in.owner]
			finish = !ok
		case o.Func() == history.FRelease && outcome == history.OK:
			in.kind = lockRelease
		case o.Func() == history.FRelease && outcome == history.Info:
			in.kind, l.open = lockMaybeRelease, true
			finish = true
		case releaseGone(o):
			in.kind = lockGone
		case o.Func() == history.FRenew && outcome == history.OK && c.Leases:
			in.kind = lockRenew
			if o.Completion.Deadline != nil {
				in.deadline, in.leased = *o.Completion.Deadline, true
			}
		default:
			continue
		}
		if finish {
			later = append(later, int32(len(out)))
		}
		in.ownerID = k
		steps = append(steps, in)
		stepOwner = append(stepOwner, k)
		out = append(out, l)
	}
	owners = finishLater(later, steps, out, owners, stepOwner, index)
	c.linkOwners(steps, out, owners, stepOwner)
	return out
}

// finishLater fills in what only the whole pass knows: the until of a
// release of unknown outcome (its owner's last operation), and the owner
// number of a phantom grant (a new one after all others when its owner had
// no operation of its own). It returns owners, with the new ones.
func finishLater(later []int32, steps []lockStep, out []linOp, owners []ownerOps, stepOwner []int32, index map[string]int32) []ownerOps {
	for _, j := range later {
		in, l := &steps[j], &out[j]
		if in.kind == lockMaybeRelease {
			l.until = max(l.call, owners[stepOwner[j]].last)
			continue
		}
		k, ok := index[in.owner] // a phantom grant's owner
		if !ok {
			k = int32(len(owners))
			index[in.owner] = k
			owners = append(owners, ownerOps{next: -1, nextOK: -1})
		}
		in.ownerID, stepOwner[j] = k, k
	}
	return owners
}

// linkOwners links each step to its owner's next request (nextOwn), and
// settles a release of unknown outcome that the owner's next request taking
// effect superseded (InOrder); each operation's input becomes its step.
func (c LockService) linkOwners(steps []lockStep, out []linOp, owners []ownerOps, stepOwner []int32) {
	for i := len(out) - 1; i >= 0; i-- {
		in := &steps[i]
		own := &owners[stepOwner[i]]
		if own.next < 0 {
			in.nextOwn = math.MaxInt64
		} else {
			in.nextOwn = own.next
		}
		own.next = out[i].call
		if in.kind == lockMaybeRelease && c.InOrder && own.nextOK >= 0 {
			// Superseded by the owner's next request that took effect: it
			// lands before that one returned, or never.
			k := own.nextOK
			out[i].open, out[i].ret, out[i].until = false, out[k].ret, out[k].ret
			in.latest = steps[k].latest
		}
		if (in.kind == lockGrant && !in.phantom) || in.kind == lockRelease {
			own.nextOK = i
		}
		out[i].input = in
	}
}

// relevant reports whether a lock model looks at o at all.
func (c LockService) relevant(o op) bool {
	switch o.Func() {
	case history.FAcquire, history.FRelease:
		return true
	case history.FRenew:
		return c.Leases
	}
	return false
}

// proof is the first later successful release or renewal by owner on key.
func (c LockService) proof(later []op, owner, key string) *op {
	for i, o := range later {
		if o.Invoke.Key == key && o.Invoke.Owner == owner && o.Outcome() == history.OK &&
			(o.Func() == history.FRelease || (c.Leases && o.Func() == history.FRenew)) {
			return &later[i]
		}
	}
	return nil
}

// opsByKey are the operations the model looks at, per key.
func (c LockService) opsByKey(h *history.Paired) map[string][]op {
	return c.opsByKeyIn(h, new(lockScratch))
}

// opsByKeyIn is opsByKey in sc's memory (valid until the next call with sc).
func (c LockService) opsByKeyIn(h *history.Paired, sc *lockScratch) map[string][]op {
	// One pass collects them all; when they share one key (the usual case)
	// that is the answer.
	n := h.OpsOf(history.FAcquire) + h.OpsOf(history.FRelease)
	if c.Leases {
		n += h.OpsOf(history.FRenew)
	}
	all := reuse.Room(sc.all, n)
	defer func() { sc.all = all }()
	oneKey := true
	for _, o := range h.Ops() {
		if c.relevant(o) {
			oneKey = oneKey && (len(all) == 0 || o.Invoke.Key == all[0].Invoke.Key)
			all = append(all, o)
		}
	}
	if len(all) == 0 {
		return map[string][]op{}
	}
	if oneKey {
		return map[string][]op{all[0].Invoke.Key: all}
	}
	counts := map[string]int{}
	for _, o := range all {
		counts[o.Invoke.Key]++
	}
	byKey := make(map[string][]op, len(counts))
	for k, n := range counts {
		byKey[k] = make([]op, 0, n)
	}
	for _, o := range all {
		byKey[o.Invoke.Key] = append(byKey[o.Invoke.Key], o)
	}
	return byKey
}

// Check runs the model per key (keys sorted).
func (c LockService) Check(events []history.Event) Verdict {
	return c.checkPaired(completed(events))
}

func (c LockService) checkPaired(h *history.Paired) Verdict {
	return withScratch(&lockScratches, func(sc *lockScratch) Verdict { return c.checkIn(h, sc) })
}

// withScratch runs check with a scratch from pool and hands the scratch back:
// at once unless the verdict is invalid, otherwise when the invalid verdict's
// visualization, which points into it, is released (Verdict.Release).
func withScratch[S any](pool *reuse.Pool[S], check func(*S) Verdict) Verdict {
	sc := pool.Get()
	v := check(sc)
	switch {
	case v.Result != Invalid:
		pool.Put(sc)
	case v.Visualization != nil:
		v.Visualization.release = func() { pool.Put(sc) }
	}
	return v
}

// checkIn is checkPaired with its searches in sc's memory.
func (c LockService) checkIn(h *history.Paired, sc *lockScratch) Verdict {
	byKey := c.opsByKeyIn(h, sc)
	stats := map[string]float64{}
	var unknown undecided
	for _, k := range sortedKeys(byKey) {
		sc.reset()
		lops := c.lockOpsIn(byKey[k], sc)
		for _, l := range lops {
			if in := l.input.(*lockStep); in.kind == lockGrant {
				stats["grants"]++
			}
		}
		if len(lops) == 0 {
			continue
		}
		stats["keys"]++
		spec := c.specIn(lops, sc)
		out := search(spec, []any{lockState{}}, lops, c.Budget)
		stats["search-steps"] += float64(out.steps)
		switch out.result {
		case Invalid:
			return c.invalid(h.Recorded(), k, spec, out, stats, lops, byKey[k])
		case Unknown:
			unknown.add(fmt.Sprintf("%q", k), out, c.Budget)
		}
	}
	if stats["grants"] == 0 {
		return Verdict{Result: Unknown, Stats: stats, Reason: "no acquire succeeded: no grant to judge"}
	}
	if v, ok := unknown.verdict(stats); ok {
		return v
	}
	what := "a mutex: no grant while another acquirer held the lock, no release by a non-holder"
	if c.Leases {
		what = "a lease lock: no grant to another acquirer before the holder's lease could have run out, no release or renewal by a non-holder"
	}
	return Verdict{Result: Valid, Stats: stats, Reason: fmt.Sprintf("%s on %s behave as %s",
		history.Plural(int(stats["grants"]), "grant", ""), history.Plural(int(stats["keys"]), "key", ""), what)}
}

func (c LockService) invalid(events []history.Event, key string, spec searchSpec, out keyOutcome, stats map[string]float64, lops []linOp, ops []op) Verdict {
	var an *analysis // only when the explanation needs it
	var cx *Counterexample
	var short string
	prefix := "the lock service broke"
	if w := c.breach(lops); w != nil {
		if c.Leases && w.foreign == nil {
			w.ended, w.early = serviceEnded(events, &w.holder, &w.grant)
			if w.concurrent {
				// Two grants that overlap: the service's end of the first
				// holder's hold, once its own promise had run out, before
				// the second returned makes the second legal by the server's
				// promise; an early end tells nothing of which came first.
				w.early = nil
			}
		}
		cx, short = w.explain(key)
		if w.ended != nil {
			prefix = "a client's own lease deadline broke"
		}
	} else {
		a := analyze(spec, out.start, out.batch, c.Budget)
		an = &a
		cx, short = c.explain(key, a, holderNames(lops), ops)
	}
	return Verdict{Result: Invalid, Stats: stats, Counterexample: withFaults(cx, events),
		Reason:        fmt.Sprintf("%s the %s model on %q: %s", prefix, c.Name(), key, short),
		Visualization: visualize(spec, out.start, out.batch, c.Budget, events, an)}
}

// foreignRelease is the first successful release, among ops, by someone
// other than holder.
func foreignRelease(ops []porcupine.Operation, holder int32) *lockStep {
	for _, o := range ops {
		if in, ok := o.Input.(*lockStep); ok && in.kind == lockRelease && in.holder() != holder {
			return in
		}
	}
	return nil
}

// explain describes the operation the model could not place, and the grant
// that made the lock busy; ops are the key's operations.
func (c LockService) explain(key string, an analysis, nameOf func(holder int32) string, ops []op) (*Counterexample, string) {
	if an.stuck == nil {
		return &Counterexample{Explanation: []string{fmt.Sprintf("No order of the grants and releases of %q fits the %s model.", key, c.Name())}},
			"no order of the grants and releases fits the model"
	}
	stuck := an.stuck.Input.(*lockStep)
	states := lockStates(an.state)
	lines := []string{fmt.Sprintf("On %q, after the longest consistent order of these operations the lock is %s.", key, describeLockStates(states, nameOf))}
	evs := opEvents(stuck.o)
	var holderGrant *lockStep
	holder := states[0].holder
	for _, p := range an.placed {
		if in, ok := p.Input.(*lockStep); ok && in.kind == lockGrant && in.holder() == holder {
			holderGrant = in
		}
	}
	holderName := cmpOr(nameOf(holder), "nobody")
	if holderGrant != nil {
		holderName = holderGrant.who()
		lines = append(lines, "The holder: "+holderGrant.String()+".")
		evs = append(evs, opEvents(holderGrant.o)...)
	}
	var short string
	var rel *lockStep
	switch stuck.kind {
	case lockGrant:
		short = fmt.Sprintf("%s was granted the lock while %s held it", stuck.who(), holderName)
		if c.Leases && holderGrant != nil {
			short += " and its lease had not run out"
		}
		// A release by someone else, left out too, is what let the grant through.
		if rel = foreignRelease(an.concurrent, holder); rel != nil {
			lines = append(lines, "Then: "+rel.String()+", although it did not hold the lock: it released "+holderName+"'s lock.")
			evs = append(evs, opEvents(rel.o)...)
			short = fmt.Sprintf("%s released the lock while %s held it, and %s was granted it", rel.who(), holderName, stuck.who())
		}
		lines = append(lines, "Then: "+stuck.String()+", while "+holderName+" held the lock.")
	case lockRelease:
		lines = append(lines, "Then: "+stuck.String()+", although it did not hold the lock: it released someone else's lock.")
		short = fmt.Sprintf("%s released the lock while %s held it", stuck.who(), holderName)
	case lockRenew:
		if holder == 0 {
			// By the history the lock was free: a reentrant lock that
			// counted holds its owner never took (leaked) renews it.
			if more, s, extra, ok := c.leakStory(ops, key, stuck); ok {
				lines, short = append(lines, more...), s
				evs = append(evs, extra...)
				break
			}
		}
		lines = append(lines, "Then: "+stuck.String()+", although it did not hold the lock.")
		short = fmt.Sprintf("%s's lease was renewed while %s held the lock", stuck.who(), holderName)
	}
	for _, o := range an.concurrent {
		if in, ok := o.Input.(*lockStep); ok && (rel == nil || in.o.Invoke.Index != rel.o.Invoke.Index) {
			lines = append(lines, "Concurrent: "+in.String()+".")
		}
	}
	slices.SortFunc(evs, func(x, y history.Event) int { return x.Index - y.Index })
	return &Counterexample{Explanation: lines, Events: evs}, short
}

// breachWitness is a grant that broke the contract, shown directly by the
// history whatever the order of concurrent operations: the holder's grant
// returned before the other grant was invoked, the other grant returned
// before the holder's lease could have run out, and the holder had not asked
// to release the lock by then. Or two concurrent grants, each returned before
// the other's lease could have run out, neither released before the other
// returned: whichever took effect second broke the contract.
type breachWitness struct {
	holder, grant lockStep
	// concurrent: the grants overlap in time and either may have come first.
	concurrent bool
	// foreign is a successful release by a third acquirer, invoked while the
	// holder held the lock and before the grant returned, by an acquirer that
	// had not been granted the lock since the holder asked for it: the
	// release that let the grant through (nil when none).
	foreign *lockStep
	leases  bool
	// ended is the lock service's own event that ended the holder's hold,
	// once its promise had run out, before the grant returned (a session
	// expiry that deleted its lock node on time): the broken promise is
	// then the client's, whose deadline outlived the hold the server gave
	// it. early is such an event before the service's promise ran out: the
	// broken promise is the service's. Both nil when the history shows
	// neither.
	ended, early *history.Event
}

// serviceEnded finds the event of the lock service itself, after holder's
// grant returned and before grant returned, that ended the holder's hold: a
// system event naming the holder's key and owner, with the deadline the
// service had promised it (true time; ZooKeeper's session expiry names the
// lock node it deleted and the leader's last contact plus the timeout).
// kept is such an event at or after that deadline (the service kept its
// promise), early one before it (the service broke it); both nil if none.
func serviceEnded(events []history.Event, holder, grant *lockStep) (kept, early *history.Event) {
	if holder.owner == "" || holder.o.Completion == nil || grant.o.Completion == nil {
		return nil, nil
	}
	from, to := holder.o.Completion.Index, grant.o.Completion.Index
	for i := range events {
		e := &events[i]
		if e.Index > from && e.Index < to && e.Process == history.NemesisProcess && e.Type == history.Start &&
			e.Owner == holder.owner && e.Key == holder.o.Invoke.Key && e.Deadline != nil {
			if *e.Deadline <= e.Time {
				return e, nil
			}
			return nil, e
		}
	}
	return nil, nil
}

// breach finds the first grant (by return) that no order of the history can
// make legal because another grant still held the lock, or nil. It names the
// grant that broke the contract, where the longest consistent order of the
// search may blame an operation that merely came after it.
//
// Among the pairs (holder a, grant b) that show a breach, it picks the grant
// b that returned first and, for it, the earliest holder in lops. A holder
// can only be part of a pair while its holding may last: from its return to
// its owner's first release after it (see releasedFrom), so the grants are
// visited in order of return with the holdings alive at that moment, which
// keeps the search near-linear in the history (a pair-by-pair search is
// cubic: hours for 100,000 operations).
func (c LockService) breach(lops []linOp) *breachWitness {
	grant := func(l linOp) bool {
		in := l.input.(*lockStep)
		return in.kind == lockGrant && !in.phantom && (!c.Leases || in.leased)
	}
	// byOwner: owner (its ownerID) -> indexes in lops of its operations,
	// every list carved at its size from one block.
	owners := 0
	for _, l := range lops {
		owners = max(owners, int(l.input.(*lockStep).ownerID)+1)
	}
	counts := make([]int, owners)
	for _, l := range lops {
		counts[l.input.(*lockStep).ownerID]++
	}
	block := make([]int, len(lops))
	byOwner := make([][]int, owners)
	for o, n := range counts {
		byOwner[o], block = block[:0:n], block[n:]
	}
	for i, l := range lops {
		o := l.input.(*lockStep).ownerID
		byOwner[o] = append(byOwner[o], i)
	}
	var grants []int // indexes in lops of the grants, by return
	end := make([]int64, len(lops))
	for i, l := range lops {
		if grant(l) {
			grants = append(grants, i)
			end[i] = releasedFrom(lops, byOwner[l.input.(*lockStep).ownerID], l.ret)
		}
	}
	slices.SortStableFunc(grants, func(x, y int) int { return cmp.Compare(lops[x].ret, lops[y].ret) })
	var alive []int // grants returned so far whose holding may last, by index in lops
	next := 0
	for _, j := range grants {
		b := lops[j]
		for ; next < len(grants) && lops[grants[next]].ret <= b.ret; next++ {
			alive = append(alive, grants[next])
		}
		kept := alive[:0]
		for _, i := range alive {
			if end[i] >= b.ret {
				kept = append(kept, i)
			}
		}
		alive = kept
		slices.Sort(alive)
		for _, i := range alive {
			if w := c.witness(lops, byOwner, i, j, end[i]); w != nil {
				return w
			}
		}
	}
	return nil
}

// releasedFrom is the earliest call (event index) of a release by the owner
// whose operations are own that can have taken effect after from: one invoked
// after from, or one of unknown outcome that may take effect after from
// (MaxInt64 when none). a release of the owner can have taken effect between from and
// a later until exactly when it is before until.
func releasedFrom(lops []linOp, own []int, from int64) int64 {
	out := int64(math.MaxInt64)
	for _, k := range own {
		r := lops[k]
		in := r.input.(*lockStep)
		if ((in.kind == lockRelease || in.kind == lockGone) && r.call > from) || (in.kind == lockMaybeRelease && (r.call > from || r.until > from)) {
			out = min(out, r.call)
		}
	}
	return out
}

// witness is the breach of holder lops[i] by the grant lops[j], or nil when
// the pair shows none; endI is releasedFrom of the holder's return.
func (c LockService) witness(lops []linOp, byOwner [][]int, i, j int, endI int64) *breachWitness {
	a, b := lops[i], lops[j]
	ain, bin := a.input.(*lockStep), b.input.(*lockStep)
	if j == i || bin.owner == ain.owner || c.outlived(ain, bin) || endI < b.ret {
		return nil
	}
	w := &breachWitness{holder: *ain, grant: *bin, leases: c.Leases}
	if b.call <= a.ret {
		// Concurrent: a breach whichever came first, if a also returned
		// before b's lease could have run out. Each pair once, a first.
		if b.ret < a.ret || (b.ret == a.ret && j < i) || c.outlived(bin, ain) {
			return nil
		}
		w.concurrent = true
	}
	for _, r := range lops {
		if rin := r.input.(*lockStep); rin.kind == lockRelease && rin.owner != ain.owner && rin.owner != bin.owner &&
			r.call > a.ret && r.call < b.ret && !grantedSince(lops, byOwner[rin.ownerID], rin.owner, a.call, r.call) {
			w.foreign = rin
			break
		}
	}
	return w
}

// outlived reports whether holder's holding can have ended before grant
// returned: with leases, the grant returned at or after the holder's lease
// deadline. Without leases only a release ends a holding.
func (c LockService) outlived(holder, grant *lockStep) bool {
	return c.Leases && grant.latest >= holder.deadline
}

// grantedSince reports whether owner, whose operations are own (indexes in
// lops), was granted the lock (its acquire returned) after from and before
// until (event indexes): its later release then gives back its own grant, not
// someone else's.
func grantedSince(lops []linOp, own []int, owner string, from, until int64) bool {
	for _, k := range own {
		g := lops[k]
		if in := g.input.(*lockStep); in.kind == lockGrant && in.owner == owner && g.ret > from && g.ret < until {
			return true
		}
	}
	return false
}

func (w *breachWitness) explain(key string) (*Counterexample, string) {
	holder, grantee := w.holder.who(), w.grant.who()
	if w.concurrent {
		if w.ended != nil {
			return w.explainClientSide(key, "The holder: "+w.holder.String()+"; it had not released the lock when the next grant returned.",
				append(opEvents(w.holder.o), opEvents(w.grant.o)...))
		}
		return w.explainConcurrent(key)
	}
	still := "held it"
	if w.leases {
		still = "held it and its lease had not run out"
	}
	lines := []string{
		fmt.Sprintf("On %q, %s was granted the lock while %s %s:", key, grantee, holder, still),
		"The holder: " + w.holder.String() + "; it had not released the lock when the next grant returned.",
	}
	evs := append(opEvents(w.holder.o), opEvents(w.grant.o)...)
	short := fmt.Sprintf("%s was granted the lock while %s %s", grantee, holder, still)
	if w.foreign != nil {
		lines = append(lines, "Then: "+w.foreign.String()+", although it did not hold the lock: it released "+holder+"'s lock.")
		evs = append(evs, opEvents(w.foreign.o)...)
		short = fmt.Sprintf("%s released the lock while %s held it, and %s was granted it", w.foreign.who(), holder, grantee)
	}
	if w.ended != nil {
		return w.explainClientSide(key, lines[1], evs)
	}
	if e := w.early; e != nil {
		lines = append(lines, fmt.Sprintf("The lock service ended %s's hold at %s, before its own promise to it ran out (%s): %s.",
			holder, history.FormatTime(e.Time), history.FormatTime(*e.Deadline), e.Detail))
		short += fmt.Sprintf(": the lock service ended %s's hold at %s, before its own promise ran out (%s, %s)",
			holder, history.FormatTime(e.Time), history.FormatTime(*e.Deadline), e.F)
		evs = append(evs, *e)
	}
	lines = append(lines, "Then: "+w.grant.String()+", while "+holder+" held the lock: this grant broke the contract.")
	slices.SortFunc(evs, func(x, y history.Event) int { return x.Index - y.Index })
	return &Counterexample{Explanation: lines, Events: evs}, short
}

// explainConcurrent tells two concurrent grants that cannot both be legal.
func (w *breachWitness) explainConcurrent(key string) (*Counterexample, string) {
	a, b := w.holder.who(), w.grant.who()
	before := "before the other's grant returned"
	if w.leases {
		before = "before the other's lease could have run out"
	}
	short := fmt.Sprintf("%s and %s were both granted the lock, each %s", a, b, before)
	lines := []string{
		fmt.Sprintf("On %q, %s and %s were both granted the lock at overlapping times, and neither released it %s: "+
			"whichever grant took effect second broke the contract.", key, a, b, before),
		"One: " + w.holder.String() + ".",
		"The other: " + w.grant.String() + ".",
	}
	evs := append(opEvents(w.holder.o), opEvents(w.grant.o)...)
	slices.SortFunc(evs, func(x, y history.Event) int { return x.Index - y.Index })
	return &Counterexample{Explanation: lines, Events: evs}, short
}

// explainClientSide tells a grant that broke a holder's lease as its client
// counted it, after the lock service had ended the holder's hold: the server
// kept its own promise, the client's deadline outlived it (a client whose
// view of its lease is longer than the server's, such as Curator's
// on-suspend=continue against ZooKeeper's session timeout).
func (w *breachWitness) explainClientSide(key, holderLine string, evs []history.Event) (*Counterexample, string) {
	holder, grantee := w.holder.who(), w.grant.who()
	ended, deadline := w.ended.Time, w.holder.deadline
	outlived := time.Duration(deadline - ended)
	short := fmt.Sprintf("%s was granted the lock while %s's lease had not run out by its own deadline (%s), "+
		"but after the lock service had ended %s's hold (%s, %s): the promise broken is the client's, not the server's",
		grantee, holder, history.FormatTime(deadline), holder, history.FormatTime(ended), w.ended.F)
	lines := []string{
		fmt.Sprintf("On %q, %s was granted the lock while %s's lease, by its own deadline, had not run out; "+
			"but the lock service had ended %s's hold before: the promise broken is the client's, not the server's:", key, grantee, holder, holder),
		holderLine,
		fmt.Sprintf("The lock service ended %s's hold at %s, when its own promise had run out (%s): %s.",
			holder, history.FormatTime(ended), history.FormatTime(*w.ended.Deadline), w.ended.Detail),
		"Then: " + w.grant.String() + ", after that: the lock service kept its promise.",
		fmt.Sprintf("%s's own deadline (%s) outlived the end of its hold on the server by %s: "+
			"its client counted the lease longer than the server keeps it (the client's view of the lease is misconfigured against the server's timeout).",
			holder, history.FormatTime(deadline), outlived.Round(time.Millisecond)),
	}
	evs = append(evs, *w.ended)
	slices.SortFunc(evs, func(x, y history.Event) int { return x.Index - y.Index })
	return &Counterexample{Explanation: lines, Events: evs}, short
}
