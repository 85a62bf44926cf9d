package storage

import (
	"fmt"
	"time"
)

// LateWrite is a write that reached the storage after its client had given
// up waiting for the answer (a write delayed past the client's timeout), and
// what became of it: refused (fenced), or applied and then read or
// overwritten. Times are true times. Its client recorded it as of unknown
// outcome, so a history in which nobody read its value is the same as one in
// which it never landed: the record says which it was. The simulated
// storage (Server) and the live one keep the same record (LateLog).
type LateWrite struct {
	Client, Key string
	Value       int64
	Token       uint64
	// Sent and Landed are when the client sent it and when the storage
	// served it.
	Sent, Landed time.Duration
	// Refused says the fencing rule refused it.
	Refused bool
	// Reads counts the reads served while its value was in force to a
	// client still waiting for the answer (a read its client had given up
	// on, queued behind the late write, shows the value to nobody).
	Reads int
	// Overwritten says another write replaced its value: By's write of
	// ByValue, at OverwrittenAt.
	Overwritten   bool
	By            string
	ByValue       int64
	OverwrittenAt time.Duration
}

// Unseen reports whether no read ever returned the late write's value
// (refused, or applied and never read): no history can show it.
func (w LateWrite) Unseen() bool { return w.Refused || w.Reads == 0 }

// LateLog keeps the record of the writes that landed after their client
// gave up on them (LateWrite). It is told of every request the storage
// served; its zero value is empty and ready. Not safe for concurrent use.
type LateLog struct {
	late []LateWrite
	// inForce is, by key, the index in late of the late write whose value
	// the key holds (none: no entry).
	inForce map[string]int
}

// Read records a read of key served (rejected: refused by the fence);
// abandoned says its client had given up on it.
func (l *LateLog) Read(key string, rejected, abandoned bool) {
	if i, ok := l.inForce[key]; ok && !rejected && !abandoned {
		l.late[i].Reads++
	}
}

// Write records client's write req served at landed (rejected: refused by
// the fence), sent at sent; abandoned says its client had given up on it.
func (l *LateLog) Write(client string, req WriteReq, rejected, abandoned bool, sent, landed time.Duration) {
	if rejected {
		if abandoned {
			l.late = append(l.late, LateWrite{Client: client, Key: req.Key, Value: req.Value, Token: req.Token,
				Sent: sent, Landed: landed, Refused: true})
		}
		return
	}
	if i, ok := l.inForce[req.Key]; ok {
		w := &l.late[i]
		w.Overwritten, w.By, w.ByValue, w.OverwrittenAt = true, client, req.Value, landed
		delete(l.inForce, req.Key)
	}
	if abandoned {
		if l.inForce == nil {
			l.inForce = map[string]int{}
		}
		l.inForce[req.Key] = len(l.late)
		l.late = append(l.late, LateWrite{Client: client, Key: req.Key, Value: req.Value, Token: req.Token,
			Sent: sent, Landed: landed})
	}
}

// Writes are the late writes, in the order they landed (the log's own
// slice: copy it to keep it past the next request).
func (l *LateLog) Writes() []LateWrite { return l.late }

// LateWriteNotes says, for each write that reached the storage after its
// client had given up on it (a write delayed past the client's timeout),
// when it landed and what became of it, on the run's clock (start is the
// true time the run started at; a write that landed after end, when the run
// stopped, is not told: the history ends before it). A late write nobody
// read leaves a history that is the same as if it had never landed: without
// the note, a valid verdict would not say that the fault did land the write.
// A live run and a simulated one tell them alike, in the run's notes.
func LateWriteNotes(late []LateWrite, start, end time.Duration) []string {
	at := func(d time.Duration) string { return fmt.Sprintf("%.3fs", (d - start).Seconds()) }
	var out []string
	for _, w := range late {
		if w.Landed-start > end {
			continue
		}
		s := fmt.Sprintf("%s's write of %d to %q", w.Client, w.Value, w.Key)
		if w.Token != 0 {
			s += fmt.Sprintf(" with token %d", w.Token)
		}
		s += fmt.Sprintf(", sent at %s and given up on by its client, reached the storage at %s (%v after it was sent)",
			at(w.Sent), at(w.Landed), (w.Landed - w.Sent).Round(time.Millisecond))
		switch {
		case w.Refused:
			s += " and was refused by the fencing rule"
		case w.Reads > 0 && w.Overwritten:
			s += fmt.Sprintf(" and was read %d time(s) before %s's write of %d replaced it at %s", w.Reads, w.By, w.ByValue, at(w.OverwrittenAt))
		case w.Reads > 0:
			s += fmt.Sprintf(" and was read %d time(s); it was still in force when the run ended", w.Reads)
		case w.Overwritten:
			s += fmt.Sprintf(" and was applied, then replaced by %s's write of %d at %s before any read: "+
				"no read saw it, so the history is the same as if it had never landed and no check can tell it landed",
				w.By, w.ByValue, at(w.OverwrittenAt))
		default:
			s += " and was applied, and still in force and unread when the run ended: " +
				"no read saw it, so the history is the same as if it had never landed and no check can tell it landed"
		}
		out = append(out, s) // no full stop, as every warning: the report adds one
	}
	return out
}
