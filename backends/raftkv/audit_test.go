package raftkv

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	pb "go.etcd.io/raft/v3/raftpb"
)

func TestAuditRejectsAndAccepts(t *testing.T) {
	tests := []struct {
		name   string
		events func(a *Audit)
		want   string // "" = no violation
	}{
		{"one leader per term, replays agree", func(a *Audit) {
			a.becameLeader(1, 2, time.Second, 0, 0)
			a.becameLeader(2, 3, 2*time.Second, 0, 0)
			a.appliedAt(1, 2, 2, []byte("x"), time.Second)
			a.appliedAt(2, 2, 2, []byte("x"), time.Second)
			a.appliedAt(1, 2, 2, []byte("x"), 3*time.Second) // replay after a restart
			a.acked(Ack{Node: 1, Term: 2, Index: 2})
			a.acked(Ack{Node: 1, Term: 2, Index: 3})
		}, ""},
		{"two leaders in one term", func(a *Audit) {
			a.becameLeader(1, 2, time.Second, 0, 0)
			a.becameLeader(2, 2, 2*time.Second, 0, 0)
		}, "2.000s: two leaders in term 2: n1 and n2"},
		{"an index applied with other data", func(a *Audit) {
			a.appliedAt(1, 5, 2, []byte("x"), time.Second)
			a.appliedAt(3, 5, 2, []byte("y"), 2*time.Second)
		}, "2.000s: committed entry lost: index 5 was applied by n1 with term 2, then by n3 with term 2 and other data"},
		{"clients answered by two leaders of one term", func(a *Audit) {
			a.acked(Ack{Node: 1, Term: 4, Index: 7, At: time.Second})
			a.acked(Ack{Node: 2, Term: 4, Index: 8, At: time.Second})
		}, "1.000s: clients acknowledged by two leaders in term 4: n1 and n2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newAudit()
			tc.events(a)
			if tc.want == "" {
				assert.Empty(t, a.violations)
			} else {
				assert.Equal(t, []string{tc.want}, a.violations)
			}
		})
	}
}

func TestAuditFindsAcknowledgedCommandsMissingFromAMajority(t *testing.T) {
	entry := func(i uint64, data string) pb.Entry {
		return pb.Entry{Index: i, Term: 2, Data: []byte(data)}
	}
	disks := []*Disk{newDisk([]uint64{1, 2, 3}, FsyncAlways, nil), newDisk([]uint64{1, 2, 3}, FsyncAlways, nil), newDisk([]uint64{1, 2, 3}, FsyncAlways, nil)}
	a := newAudit()
	a.appliedAt(1, 2, 2, []byte("x"), 0)
	a.acked(Ack{Node: 1, Term: 2, Index: 2, Session: "c1", Seq: 1})
	disks[0].write(pb.HardState{}, []pb.Entry{entry(2, "x")})
	assert.Len(t, a.checkKept(disks), 1, "on one node of three")
	disks[1].write(pb.HardState{}, []pb.Entry{entry(2, "x")})
	assert.Empty(t, a.checkKept(disks), "on two of three")
	disks[1].write(pb.HardState{}, []pb.Entry{entry(2, "other")})
	assert.Len(t, a.checkKept(disks), 1, "overwritten on one of them")
}

func TestDiskLosesOnlyWhatWasNotSynced(t *testing.T) {
	d := newDisk([]uint64{1}, FsyncInterval, nil)
	e := func(i uint64) pb.Entry { return pb.Entry{Index: i, Term: 1} }
	d.write(pb.HardState{}, []pb.Entry{e(2), e(3)})
	d.Sync()
	d.write(pb.HardState{Term: 2, Vote: 1}, []pb.Entry{e(4)})
	d.crash()
	hard, ents := d.Durable()
	assert.Equal(t, uint64(1), hard.Term, "the unsynced vote is gone")
	assert.Len(t, ents, 2)
	d.write(pb.HardState{}, []pb.Entry{e(3)}) // a new leader overwrites from index 3
	assert.Len(t, d.cache.entries, 2)
}
