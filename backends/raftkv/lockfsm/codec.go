package lockfsm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// codecVersion is the first byte of every encoded command.
const codecVersion = 1

// ops numbers the commands in the binary encoding.
var ops = []Op{OpTryLock, OpUnlock, OpKeepLease, OpGet}

// Encode renders a command as the bytes of a log entry: a version byte, then
// the op's number and the fields in order (strings and bytes length-prefixed,
// integers as varints). Binary rather than JSON because every replica decodes
// every entry: this is the simulation's hottest path.
func Encode(c Command) []byte {
	op := slices.Index(ops, c.Op)
	if op < 0 {
		op = len(ops) // an unknown op: encoded so that Decode refuses it
	}
	b := make([]byte, 0, 48+len(c.Key)+len(c.Acquirer)+len(c.Context)+len(c.Session))
	b = append(b, codecVersion)
	b = binary.AppendUvarint(b, uint64(op))
	b = appendString(b, c.Key)
	b = appendString(b, c.Acquirer)
	b = binary.AppendVarint(b, int64(c.Lease))
	b = appendString(b, string(c.Context))
	b = binary.AppendVarint(b, c.Stamp)
	b = appendString(b, c.Session)
	return binary.AppendUvarint(b, c.Seq)
}

// KnownOp reports whether the codec encodes op (Decode refuses the others).
func KnownOp(op Op) bool { return slices.Contains(ops, op) }

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Decode reads a command from the bytes of a log entry.
func Decode(data []byte) (Command, error) { return DecodeInterned(data, nil) }

// Strings interns the strings DecodeInterned reads: a replica decodes every
// entry, and keys, acquirers and sessions recur, so each is allocated once.
type Strings map[string]string

// DecodeInterned is Decode taking its strings from strs (adding the new ones);
// nil strs interns nothing. With strs, the command's Context is not copied:
// it is a capped slice of data, which the caller must not change afterwards
// (a log entry's data never is).
func DecodeInterned(data []byte, strs Strings) (Command, error) {
	r := reader{b: data, strs: strs}
	if v := r.byte(); v != codecVersion {
		return Command{}, fmt.Errorf("decode lock command: version %d, want %d", v, codecVersion)
	}
	var c Command
	op := r.uvarint()
	c.Key = r.string()
	c.Acquirer = r.string()
	c.Lease = time.Duration(r.varint())
	if ctx := r.bytes(); len(ctx) > 0 {
		if strs == nil {
			ctx = slices.Clone(ctx)
		}
		c.Context = ctx
	}
	c.Stamp = r.varint()
	c.Session = r.string()
	c.Seq = r.uvarint()
	switch {
	case r.err != nil:
		return Command{}, fmt.Errorf("decode lock command: %w", r.err)
	case len(r.b) > 0:
		return Command{}, fmt.Errorf("decode lock command: %d bytes of trailing data", len(r.b))
	case op >= uint64(len(ops)):
		return Command{}, fmt.Errorf("decode lock command: unknown op number %d", op)
	}
	c.Op = ops[op]
	return c, nil
}

// reader consumes an encoded command; the first error sticks.
type reader struct {
	b    []byte
	err  error
	strs Strings
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("truncated or malformed %s", what)
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail("version")
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("integer")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// varint reads binary.AppendVarint's zig-zag encoding, decoded as
// binary.Varint decodes it.
func (r *reader) varint() int64 {
	ux := r.uvarint()
	v := int64(ux >> 1)
	if ux&1 != 0 {
		v = ^v
	}
	return v
}

// bytes returns a length-prefixed field as a capped slice of the input.
func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail("string")
		return nil
	}
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) string() string {
	b := r.bytes()
	n := len(b)
	if r.strs == nil || n == 0 {
		return string(b)
	}
	if s, ok := r.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	r.strs[s] = s
	return s
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

// snapshot is the serialised state. encoding/json writes map keys sorted, so
// the bytes depend on the state only.
type snapshot struct {
	Config   Config              `json:"config"`
	Locks    map[string]Owner    `json:"locks"`
	Fence    uint64              `json:"fence"`
	Sessions map[string]*session `json:"sessions"`
	Applied  uint64              `json:"applied"`
}

// Snapshot encodes the whole state deterministically.
func (m *Machine) Snapshot() ([]byte, error) {
	b, err := json.Marshal(snapshot{Config: m.cfg, Locks: m.locks, Fence: m.fence, Sessions: m.sessions, Applied: m.applied})
	if err != nil {
		return nil, fmt.Errorf("lockfsm: snapshot: %w", err)
	}
	return b, nil
}

// Restore replaces the state with a snapshot's.
func (m *Machine) Restore(data []byte) error {
	var s snapshot
	if err := strictUnmarshal(data, &s); err != nil {
		return fmt.Errorf("lockfsm: restore: %w", err)
	}
	if s.Locks == nil {
		s.Locks = map[string]Owner{}
	}
	if s.Sessions == nil {
		s.Sessions = map[string]*session{}
	}
	for id, ss := range s.Sessions { // determinism:ok validation only: any order finds the same nulls
		if ss == nil {
			return fmt.Errorf("lockfsm: restore: session %q is null", id)
		}
	}
	if s.Config.Unlock == "" {
		s.Config.Unlock = UnlockCount
	}
	*m = Machine{cfg: s.Config, locks: s.Locks, fence: s.Fence, sessions: s.Sessions, applied: s.Applied}
	return nil
}
