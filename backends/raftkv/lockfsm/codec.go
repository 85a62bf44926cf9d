package lockfsm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Encode renders a command as the bytes of a log entry (JSON).
func Encode(c Command) []byte {
	b, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("lockfsm: encode %+v: %v", c, err))
	}
	return b
}

// Decode reads a command from the bytes of a log entry, rejecting unknown
// fields and trailing data.
func Decode(data []byte) (Command, error) {
	var c Command
	if err := strictUnmarshal(data, &c); err != nil {
		return Command{}, fmt.Errorf("decode lock command: %w", err)
	}
	return c, nil
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
	Config   Config             `json:"config"`
	Locks    map[string]Owner   `json:"locks"`
	Fence    uint64             `json:"fence"`
	Sessions map[string]session `json:"sessions"`
	Applied  uint64             `json:"applied"`
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
		s.Sessions = map[string]session{}
	}
	if s.Config.Unlock == "" {
		s.Config.Unlock = UnlockCount
	}
	*m = Machine{cfg: s.Config, locks: s.Locks, fence: s.Fence, sessions: s.Sessions, applied: s.Applied}
	return nil
}
