package raftnode

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leaseStep is one thing that happens to a leader's session leases, at now.
type leaseStep struct {
	now     time.Duration
	heard   []int64 // sessions a client's contact renews
	expire  []int64 // an Expire over these sessions
	restart []int64 // a new leader's Restart over these sessions
	ended   []int64 // sessions whose end applied
	reset   bool    // a Reset (a crash or a start)
	refuse  bool    // the log refuses proposals from this step on (until a step accepts again)
	accept  bool    // the log accepts proposals again
}

func TestSessionLeases(t *testing.T) {
	const timeout = 100 * time.Millisecond
	tests := []struct {
		name     string
		steps    []leaseStep
		proposed []int64 // every proposal made, refused ones included, in order
		granted  []int64 // every lease the leader started on its own, in order
		expiring []int64 // sessions expiring at the end
	}{
		{
			name: "a session heard within its timeout is not proposed",
			steps: []leaseStep{
				{now: 0, heard: []int64{1}},
				{now: 60 * time.Millisecond, heard: []int64{1}},
				{now: 150 * time.Millisecond, expire: []int64{1}},
			},
		},
		{
			name: "a session silent exactly its timeout is not proposed yet",
			steps: []leaseStep{
				{now: 0, heard: []int64{1}},
				{now: timeout, expire: []int64{1}},
			},
		},
		{
			name: "a session silent past its timeout is proposed once",
			steps: []leaseStep{
				{now: 0, heard: []int64{1, 2}},
				{now: 90 * time.Millisecond, heard: []int64{2}},
				{now: 101 * time.Millisecond, expire: []int64{1, 2}},
				{now: 110 * time.Millisecond, expire: []int64{1, 2}},
				{now: 500 * time.Millisecond, expire: []int64{1}},
			},
			proposed: []int64{1},
			expiring: []int64{1},
		},
		{
			name: "sessions are proposed in the order they are given",
			steps: []leaseStep{
				{now: 0, heard: []int64{3, 1, 2}},
				{now: time.Second, expire: []int64{1, 2, 3}},
			},
			proposed: []int64{1, 2, 3},
			expiring: []int64{1, 2, 3},
		},
		{
			name: "a refused proposal is retried at the next tick",
			steps: []leaseStep{
				{now: 0, heard: []int64{1}},
				{now: 200 * time.Millisecond, refuse: true, expire: []int64{1}},
				{now: 210 * time.Millisecond, accept: true, expire: []int64{1}},
				{now: 220 * time.Millisecond, expire: []int64{1}},
			},
			proposed: []int64{1, 1},
			expiring: []int64{1},
		},
		{
			name: "a session never heard from is granted a lease from now, not proposed",
			steps: []leaseStep{
				{now: 500 * time.Millisecond, expire: []int64{7}},
				{now: 550 * time.Millisecond, expire: []int64{7}},
				{now: 601 * time.Millisecond, expire: []int64{7}},
			},
			proposed: []int64{7},
			granted:  []int64{7},
			expiring: []int64{7},
		},
		{
			name: "a session whose end applied is forgotten",
			steps: []leaseStep{
				{now: 0, heard: []int64{1}},
				{now: 200 * time.Millisecond, expire: []int64{1}},
				{now: 210 * time.Millisecond, ended: []int64{1}},
			},
			proposed: []int64{1},
		},
		{
			name: "a new leader grants every session a fresh lease",
			steps: []leaseStep{
				{now: 0, heard: []int64{1, 2}},
				{now: 200 * time.Millisecond, expire: []int64{1}},
				{now: 250 * time.Millisecond, restart: []int64{2, 1}},
				{now: 300 * time.Millisecond, expire: []int64{1, 2}},
			},
			proposed: []int64{1},
			granted:  []int64{2, 1},
		},
		{
			name: "a reset forgets every contact and every proposal",
			steps: []leaseStep{
				{now: 0, heard: []int64{1, 2}},
				{now: 200 * time.Millisecond, expire: []int64{1}},
				{now: 210 * time.Millisecond, reset: true},
				{now: 220 * time.Millisecond, expire: []int64{1, 2}},
			},
			proposed: []int64{1},
			granted:  []int64{1, 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var proposed, granted []int64
			refusing := false
			l := SessionLeases{
				Timeout: func(int64) time.Duration { return timeout },
				Propose: func(id int64) error {
					proposed = append(proposed, id)
					if refusing {
						return errors.New("not the leader")
					}
					return nil
				},
				Granted: func(id int64) { granted = append(granted, id) },
			}
			l.Reset()
			for _, st := range tt.steps {
				refusing = (refusing || st.refuse) && !st.accept
				if st.reset {
					l.Reset()
				}
				for _, id := range st.heard {
					l.Heard(id, st.now)
				}
				for _, id := range st.ended {
					l.Ended(id)
				}
				if st.restart != nil {
					l.Restart(st.now, st.restart)
				}
				if st.expire != nil {
					l.Expire(st.now, st.expire)
				}
			}
			assert.Equal(t, tt.proposed, proposed, "proposals")
			assert.Equal(t, tt.granted, granted, "leases granted by the leader")
			for _, id := range []int64{1, 2, 3, 7} {
				assert.Equal(t, slices.Contains(tt.expiring, id), l.Expiring(id), "session %d expiring", id)
			}
		})
	}
}

func TestSessionLeasesWithoutGrantedHook(t *testing.T) {
	var proposed []int64
	l := SessionLeases{
		Timeout: func(id int64) time.Duration { return time.Duration(id) * time.Second },
		Propose: func(id int64) error { proposed = append(proposed, id); return nil },
	}
	l.Restart(0, []int64{1, 2})
	require.Empty(t, proposed, "a fresh lease is not proposed")
	l.Expire(1500*time.Millisecond, []int64{1, 2, 3})
	assert.Equal(t, []int64{1}, proposed, "each session runs on its own timeout; one never heard from starts now")
	l.Expire(3500*time.Millisecond, []int64{1, 2, 3})
	assert.Equal(t, []int64{1, 2}, proposed, "session 3 was granted its lease at 1.5 s, for 3 s")
}
