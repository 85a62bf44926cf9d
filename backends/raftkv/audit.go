package raftkv

import (
	"bytes"
	"fmt"
	"slices"
	"time"
)

// Election is one node becoming leader.
type Election struct {
	Term   uint64
	Leader uint64
	// At is the true time it became leader.
	At time.Duration
	// Campaign is the time from the winner's first campaign since it last
	// heard from a leader until it became leader (true time): the election
	// proper, split votes included.
	Campaign time.Duration
	// Leaderless is the time from the moment the winner last heard from a
	// leader (or started) until it became leader: the election timeout plus
	// the campaign, what clients wait for.
	Leaderless time.Duration
}

// Ack is a command whose result a leader sent to a client.
type Ack struct {
	Node, Term, Index uint64
	Session           string
	Seq               uint64
	At                time.Duration
}

// appliedEntry is the first application of a log index: by node (0: none
// yet), with term and data.
type appliedEntry struct {
	term uint64
	data []byte
	node uint64
}

// Audit watches a raft group from outside (it is not part of any node) and
// records what Raft promises: at most one leader per term, the same entry
// at each index on every node that applies it, and every command whose
// result a client was given still in the logs of a majority at the end.
type Audit struct {
	elections  []Election
	leaders    map[uint64]uint64 // term -> leader
	applied    []appliedEntry    // by log index
	acks       []Ack
	ackLeaders map[uint64]uint64 // term -> node that acknowledged commands of that term
	violations []string
}

func newAudit() *Audit {
	return &Audit{leaders: map[uint64]uint64{}, ackLeaders: map[uint64]uint64{}}
}

func (a *Audit) violate(format string, args ...any) {
	a.violations = append(a.violations, fmt.Sprintf(format, args...))
}

// becameLeader records that node id leads term.
func (a *Audit) becameLeader(id, term uint64, at, campaign, leaderless time.Duration) {
	if prev, ok := a.leaders[term]; ok && prev != id {
		a.violate("%s: two leaders in term %d: %s and %s", fmtTrue(at), term, NodeName(prev), NodeName(id))
	}
	a.leaders[term] = id
	a.elections = append(a.elections, Election{Term: term, Leader: id, At: at, Campaign: campaign, Leaderless: leaderless})
}

// appliedAt records that node id applied the entry (index, term, data).
// Nodes apply the very data the leader proposed (entries travel shared), so
// the comparison of an index's data is usually of an array with itself.
func (a *Audit) appliedAt(id, index, term uint64, data []byte, at time.Duration) {
	a.applied = extend(a.applied, index)
	prev := &a.applied[index]
	if prev.node == 0 {
		*prev = appliedEntry{term: term, data: data, node: id}
		return
	}
	if prev.term != term || !bytes.Equal(prev.data, data) {
		a.violate("%s: committed entry lost: index %d was applied by %s with term %d, then by %s with term %d and other data",
			fmtTrue(at), index, NodeName(prev.node), prev.term, NodeName(id), term)
	}
}

// acked records that node told a client the result of a command.
func (a *Audit) acked(ack Ack) {
	if prev, ok := a.ackLeaders[ack.Term]; ok && prev != ack.Node {
		a.violate("%s: clients acknowledged by two leaders in term %d: %s and %s", fmtTrue(ack.At), ack.Term,
			NodeName(prev), NodeName(ack.Node))
	}
	a.ackLeaders[ack.Term] = ack.Node
	a.acks = extend(a.acks, uint64(len(a.acks)))
	a.acks[len(a.acks)-1] = ack
}

// extend returns s long enough to hold index i (at least i+1 elements),
// doubling its capacity when it grows: append grows a long slice by a
// quarter, copying the whole table every few hundred entries.
func extend[T any](s []T, i uint64) []T {
	n := int(i) + 1
	if n <= len(s) {
		return s
	}
	if n > cap(s) {
		s = slices.Grow(s, max(n, 2*cap(s))-len(s))
	}
	return s[:n]
}

// checkKept checks that every acknowledged command is, at the end, in the
// log of a majority of the nodes (what they have written; after a crash,
// what their disks kept).
func (a *Audit) checkKept(disks []*Disk) []string {
	var out []string
	for _, ack := range a.acks {
		var want appliedEntry
		if ack.Index < uint64(len(a.applied)) {
			want = a.applied[ack.Index]
		}
		have := 0
		for _, d := range disks {
			ents := d.cache.entries
			first := d.SnapshotIndex() + 1
			if ack.Index < first || ack.Index-first >= uint64(len(ents)) {
				continue
			}
			e := ents[ack.Index-first]
			if e.Term == want.term && bytes.Equal(e.Data, want.data) {
				have++
			}
		}
		if have <= len(disks)/2 {
			out = append(out, fmt.Sprintf("acknowledged command lost: index %d (term %d, %s seq %d, acked by %s at %s) is in the log of %d of %d nodes at the end",
				ack.Index, ack.Term, ack.Session, ack.Seq, NodeName(ack.Node), fmtTrue(ack.At), have, len(disks)))
		}
	}
	return out
}

// Elections lists the elections in the order they happened.
func (a *Audit) Elections() []Election { return slices.Clone(a.elections) }

// Acks counts the commands whose results clients were given.
func (a *Audit) Acks() int { return len(a.acks) }

// Terms lists the terms that had a leader, with it, sorted by term.
func (a *Audit) Terms() [][2]uint64 {
	terms := make([]uint64, 0, len(a.leaders))
	for t := range a.leaders { // determinism:ok collected, then sorted
		terms = append(terms, t)
	}
	slices.Sort(terms)
	out := make([][2]uint64, len(terms))
	for i, t := range terms {
		out[i] = [2]uint64{t, a.leaders[t]}
	}
	return out
}

func fmtTrue(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }
