package lockfsm

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Op is what a command does.
type Op string

// Commands of the lock state machine.
const (
	OpTryLock   Op = "try-lock"
	OpUnlock    Op = "unlock"
	OpKeepLease Op = "keep-lease"
	OpGet       Op = "get"
)

// Code is the result code of a command (RheaKV's names where it has them).
type Code string

// Result codes.
const (
	FirstTimeSuccess  Code = "FIRST_TIME_SUCCESS"  // try-lock on a free key
	NewAcquireSuccess Code = "NEW_ACQUIRE_SUCCESS" // try-lock on a key whose owner's lease expired
	ReentrantSuccess  Code = "REENTRANT_SUCCESS"   // try-lock by the owner itself
	KeepLeaseSuccess  Code = "KEEP_LEASE_SUCCESS"  // keep-lease by the owner
	KeepLeaseFail     Code = "KEEP_LEASE_FAIL"     // keep-lease by anyone else, or after expiry
	UnlockSuccess     Code = "UNLOCK_SUCCESS"      // unlock by the owner, or of a free key
	HeldByOther       Code = "HELD_BY_OTHER"       // try-lock or unlock refused: another acquirer owns the key
	Owned             Code = "OWNED"               // get: the key has a live owner
	Free              Code = "FREE"                // get: the key has no live owner
	Stale             Code = "STALE"               // an older command of a session: not applied
)

// UnlockMode is how unlock treats the acquire count.
type UnlockMode string

// Unlock modes.
const (
	// UnlockCount decrements the count and deletes the lock at zero (RheaKV).
	UnlockCount UnlockMode = "count"
	// UnlockDelete deletes the lock on any unlock by its owner, whatever the
	// count: the first nested release frees a reentrant lock early.
	UnlockDelete UnlockMode = "delete"
)

// Config configures a machine. The zero value is RheaKV's behaviour.
type Config struct {
	// Unlock is count (default) or delete.
	Unlock UnlockMode `json:"unlock,omitempty"`
}

// Command is one entry of the replicated log.
type Command struct {
	Op       Op     `json:"op"`
	Key      string `json:"key"`
	Acquirer string `json:"acquirer,omitempty"`
	// Lease is the lease a try-lock or keep-lease asks for.
	Lease time.Duration `json:"lease,omitempty"`
	// Context is the acquirer's context, shown to others while it holds.
	Context []byte `json:"context,omitempty"`
	// Stamp is the wall-clock time (Unix ns) of the node that stamped the
	// command; every deadline is computed from it.
	Stamp int64 `json:"stamp"`
	// Session and Seq identify the request for exactly-once retries; an empty
	// Session disables the check.
	Session string `json:"session,omitempty"`
	Seq     uint64 `json:"seq,omitempty"`
}

// Owner is the holder of a lock key.
type Owner struct {
	Acquirer string `json:"acquirer"`
	// Deadline is the end of the lease on the stamping clock (Unix ns).
	Deadline int64  `json:"deadline"`
	Token    uint64 `json:"token"`
	Acquires int    `json:"acquires"`
	Context  []byte `json:"context,omitempty"`
}

// Result is what a command returns.
type Result struct {
	Code    Code `json:"code"`
	Success bool `json:"success"`
	// Owner is the owner after the command when it succeeded (Acquires 0 after
	// the last unlock), and the current owner (zero if none) when it failed.
	Owner Owner `json:"owner"`
	// Remaining is the owner's lease left at the command's stamp (negative:
	// expired); zero when there is no owner.
	Remaining time.Duration `json:"remaining,omitempty"`
	// Duplicate reports a retry answered from the session table.
	Duplicate bool `json:"duplicate,omitempty"`
}

type session struct {
	Seq    uint64 `json:"seq"`
	Result Result `json:"result"`
}

// Machine is the lock state machine. It is not safe for concurrent use.
type Machine struct {
	cfg      Config
	locks    map[string]Owner
	fence    uint64
	sessions map[string]*session // updated in place: one lookup per command
	applied  uint64
}

// ErrInvalid marks a command the machine refuses (unknown op, missing field).
// It is deterministic: every replica refuses the same command.
var ErrInvalid = errors.New("invalid lock command")

// New returns an empty machine.
func New(cfg Config) *Machine {
	if cfg.Unlock == "" {
		cfg.Unlock = UnlockCount
	}
	return &Machine{cfg: cfg, locks: map[string]Owner{}, sessions: map[string]*session{}}
}

// Config is the machine's configuration.
func (m *Machine) Config() Config { return m.cfg }

// Applied counts the commands applied (duplicates and refusals included).
func (m *Machine) Applied() uint64 { return m.applied }

// Fence is the last fencing token handed out.
func (m *Machine) Fence() uint64 { return m.fence }

func validate(c *Command) error {
	switch c.Op {
	case OpTryLock, OpKeepLease:
		if c.Lease <= 0 {
			return fmt.Errorf("%w: %s %q: lease must be positive, got %v", ErrInvalid, c.Op, c.Key, c.Lease)
		}
	case OpUnlock, OpGet:
	default:
		return fmt.Errorf("%w: unknown op %q", ErrInvalid, c.Op)
	}
	if c.Key == "" {
		return fmt.Errorf("%w: %s without a key", ErrInvalid, c.Op)
	}
	if c.Acquirer == "" && c.Op != OpGet {
		return fmt.Errorf("%w: %s %q without an acquirer", ErrInvalid, c.Op, c.Key)
	}
	return nil
}

// Apply executes one command. An invalid command changes nothing and returns
// an error wrapping ErrInvalid.
func (m *Machine) Apply(c Command) (Result, error) {
	m.applied++
	var s *session
	if c.Session != "" {
		s = m.sessions[c.Session]
		switch {
		case s != nil && c.Seq == s.Seq:
			r := s.Result
			r.Duplicate = true
			return r, nil
		case s != nil && c.Seq < s.Seq:
			return Result{Code: Stale}, nil
		}
	}
	if err := validate(&c); err != nil {
		return Result{}, err
	}
	var r Result
	switch c.Op {
	case OpTryLock:
		r = m.tryLock(&c)
	case OpUnlock:
		r = m.unlock(&c)
	case OpKeepLease:
		r = m.keepLease(&c)
	case OpGet:
		r = m.get(&c)
	}
	switch {
	case s != nil:
		*s = session{Seq: c.Seq, Result: r}
	case c.Session != "":
		m.sessions[c.Session] = &session{Seq: c.Seq, Result: r}
	}
	return r, nil
}

// refuse is a failure reporting the current owner prev.
func refuse(code Code, prev Owner, stamp int64) Result {
	return Result{Code: code, Owner: prev, Remaining: time.Duration(prev.Deadline - stamp)}
}

func (m *Machine) grant(c *Command, code Code) Result {
	m.fence++
	o := Owner{Acquirer: c.Acquirer, Deadline: c.Stamp + int64(c.Lease), Token: m.fence, Acquires: 1,
		Context: slices.Clone(c.Context)}
	m.locks[c.Key] = o
	return Result{Code: code, Success: true, Owner: o, Remaining: c.Lease}
}

func (m *Machine) tryLock(c *Command) Result {
	prev, held := m.locks[c.Key]
	switch {
	case !held:
		return m.grant(c, FirstTimeSuccess)
	case prev.Deadline < c.Stamp:
		return m.grant(c, NewAcquireSuccess)
	case prev.Acquirer == c.Acquirer:
		o := prev
		o.Deadline = c.Stamp + int64(c.Lease)
		o.Acquires++
		o.Context = slices.Clone(c.Context)
		m.locks[c.Key] = o
		return Result{Code: ReentrantSuccess, Success: true, Owner: o, Remaining: c.Lease}
	default:
		return refuse(HeldByOther, prev, c.Stamp)
	}
}

func (m *Machine) unlock(c *Command) Result {
	prev, held := m.locks[c.Key]
	switch {
	case !held:
		return Result{Code: UnlockSuccess, Success: true, Owner: Owner{Acquirer: c.Acquirer}}
	case prev.Acquirer != c.Acquirer:
		return refuse(HeldByOther, prev, c.Stamp)
	}
	o := prev
	o.Acquires--
	if m.cfg.Unlock == UnlockDelete {
		o.Acquires = 0
	}
	if o.Acquires <= 0 {
		o.Acquires = 0
		delete(m.locks, c.Key)
	} else {
		m.locks[c.Key] = o
	}
	return Result{Code: UnlockSuccess, Success: true, Owner: o, Remaining: time.Duration(o.Deadline - c.Stamp)}
}

func (m *Machine) keepLease(c *Command) Result {
	prev, held := m.locks[c.Key]
	if !held || prev.Acquirer != c.Acquirer || prev.Deadline < c.Stamp {
		if !held {
			return Result{Code: KeepLeaseFail}
		}
		return refuse(KeepLeaseFail, prev, c.Stamp)
	}
	o := prev
	o.Deadline = c.Stamp + int64(c.Lease)
	m.locks[c.Key] = o
	return Result{Code: KeepLeaseSuccess, Success: true, Owner: o, Remaining: c.Lease}
}

func (m *Machine) get(c *Command) Result {
	prev, held := m.locks[c.Key]
	if !held || prev.Deadline < c.Stamp {
		return Result{Code: Free, Success: true}
	}
	return Result{Code: Owned, Success: true, Owner: prev, Remaining: time.Duration(prev.Deadline - c.Stamp)}
}

// Lookup returns the owner of key as stored (expired or not).
func (m *Machine) Lookup(key string) (Owner, bool) {
	o, ok := m.locks[key]
	return o, ok
}

// Keys lists the keys that have an owner record, sorted.
func (m *Machine) Keys() []string {
	keys := make([]string, 0, len(m.locks))
	for k := range m.locks { // determinism:ok collected, then sorted
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
