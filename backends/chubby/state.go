package chubby

import "github.com/locklab/locklab/internal/sorted"

// txn is one entry of the replicated log.
type txn struct {
	Op      string `json:"op"` // open, expire, acquire, release
	Session int64  `json:"session,omitempty"`
	Lock    string `json:"lock,omitempty"`
	Origin  uint64 `json:"origin,omitempty"`
	Seq     uint64 `json:"seq,omitempty"`
	// Cleared (acquire): the proposing master saw the lock freed by an
	// expiry and its lock-delay over. An acquire that finds the lock so
	// freed without it is refused: the expiry was applied after the master
	// let the acquire through, before any lock-delay of it had started.
	Cleared bool `json:"cleared,omitempty"`
}

type lockFile struct {
	holder     int64 // 0: free
	generation uint64
	// lost: the lock was freed by its holder's session expiring (no clean
	// release) and not granted since. A new master, not knowing when the
	// old master's lock-delay of it started, starts a whole one.
	lost bool
}

// state is the cell's replicated state: sessions and lock files.
type state struct {
	sessions map[int64]bool
	locks    map[string]*lockFile
}

func newState() *state { return &state{sessions: map[int64]bool{}, locks: map[string]*lockFile{}} }

// outcome is what applying a txn did.
type outcome struct {
	code Code
	seq  Sequencer
	lost []string // expire: the locks the session held, released uncleanly
}

func (s *state) apply(x txn) outcome {
	switch x.Op {
	case "open":
		s.sessions[x.Session] = true
		return outcome{code: CodeOK}
	case "expire":
		if !s.sessions[x.Session] {
			return outcome{code: CodeExpired}
		}
		delete(s.sessions, x.Session)
		var lost []string
		for _, name := range s.lockNames() {
			if l := s.locks[name]; l.holder == x.Session {
				l.holder, l.lost = 0, true
				lost = append(lost, name)
			}
		}
		return outcome{code: CodeOK, lost: lost}
	case "acquire":
		if !s.sessions[x.Session] {
			return outcome{code: CodeExpired}
		}
		l := s.locks[x.Lock]
		if l == nil {
			l = &lockFile{}
			s.locks[x.Lock] = l
		}
		if (l.holder != 0 && l.holder != x.Session) || (l.holder == 0 && l.lost && !x.Cleared) {
			return outcome{code: CodeBusy}
		}
		if l.holder == 0 {
			l.holder, l.lost = x.Session, false
			l.generation++
		}
		return outcome{code: CodeOK, seq: Sequencer{Lock: x.Lock, Mode: "exclusive", Generation: l.generation}}
	case "release":
		l := s.locks[x.Lock]
		if l == nil || l.holder != x.Session {
			return outcome{code: CodeBusy}
		}
		l.holder = 0
		return outcome{code: CodeOK}
	}
	panic("chubby: unknown txn " + x.Op)
}

func (s *state) lockNames() []string {
	return sorted.Keys(s.locks)
}

// heldBy are the locks session holds, sorted.
func (s *state) heldBy(session int64) []string {
	var out []string
	for _, name := range s.lockNames() {
		if s.locks[name].holder == session {
			out = append(out, name)
		}
	}
	return out
}

// lostLocks are the locks freed by a session's expiry and not granted
// since, sorted.
func (s *state) lostLocks() []string {
	var out []string
	for _, name := range s.lockNames() {
		if s.locks[name].lost {
			out = append(out, name)
		}
	}
	return out
}

func (s *state) sessionIDs() []int64 {
	return sorted.Keys(s.sessions)
}
