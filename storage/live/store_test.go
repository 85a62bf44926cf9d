package live

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/storage"
)

// step is one request the storage serves in a test: from a client, at a
// true time, abandoned or not by its caller.
type step struct {
	client    string
	req       any
	at        time.Duration
	abandoned bool
}

func write(client string, value int64, token uint64, at time.Duration, abandoned bool) step {
	return step{client, storage.WriteReq{Key: "k", Value: value, Token: token}, at, abandoned}
}

func read(client string, token uint64, at time.Duration) step {
	return step{client, storage.ReadReq{Key: "k", Token: token}, at, false}
}

func abandonedRead(client string, token uint64, at time.Duration) step {
	return step{client, storage.ReadReq{Key: "k", Token: token}, at, true}
}

func TestLateWritesRecordWhatBecameOfAWriteItsClientGaveUpOn(t *testing.T) {
	const s = time.Second
	for _, tc := range []struct {
		name  string
		mode  storage.Mode
		steps []step
		want  []LateWrite
	}{
		{"writes answered in time are not recorded", storage.Unfenced,
			[]step{write("c1", 1, 1, 1*s, false), read("c2", 2, 2*s), write("c2", 2, 2, 3*s, false)}, nil},
		{"a late write overwritten before any read is unseen", storage.Unfenced,
			[]step{read("c2", 4, 14*s), write("c1", 2, 3, 15*s, true), write("c2", 113, 4, 15*s+40*time.Millisecond, false)},
			[]LateWrite{{Client: "c1", Key: "k", Value: 2, Token: 3, Sent: 0, Landed: 15 * s,
				Overwritten: true, By: "c2", ByValue: 113, OverwrittenAt: 15*s + 40*time.Millisecond}}},
		{"a late write read before it is overwritten is seen", storage.Unfenced,
			[]step{write("c1", 2, 3, 15*s, true), read("c2", 4, 16*s), read("c1", 5, 17*s), write("c2", 3, 4, 18*s, false)},
			[]LateWrite{{Client: "c1", Key: "k", Value: 2, Token: 3, Landed: 15 * s, Reads: 2,
				Overwritten: true, By: "c2", ByValue: 3, OverwrittenAt: 18 * s}}},
		{"reads their clients gave up on, queued behind the late write, do not see it", storage.Unfenced,
			[]step{write("c1", 2, 3, 15*s, true), abandonedRead("c1", 3, 15*s), abandonedRead("c1", 3, 15*s), write("c2", 113, 4, 15*s+40*time.Millisecond, false)},
			[]LateWrite{{Client: "c1", Key: "k", Value: 2, Token: 3, Landed: 15 * s,
				Overwritten: true, By: "c2", ByValue: 113, OverwrittenAt: 15*s + 40*time.Millisecond}}},
		{"a late write still in force at the end is left as it is", storage.Unfenced,
			[]step{write("c1", 2, 3, 15*s, true)},
			[]LateWrite{{Client: "c1", Key: "k", Value: 2, Token: 3, Landed: 15 * s}}},
		{"fenced storage refuses a late write with an old token", storage.Fenced,
			[]step{write("c2", 113, 4, 14*s, false), write("c1", 2, 3, 15*s, true), read("c2", 4, 16*s)},
			[]LateWrite{{Client: "c1", Key: "k", Value: 2, Token: 3, Landed: 15 * s, Refused: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := NewServer(storage.Options{Mode: tc.mode})
			for _, x := range tc.steps {
				st.ServeFrom(x.client, x.req, faultnet.Delivery{Arrived: x.at, Abandoned: x.abandoned})
			}
			got := st.LateWrites()
			require.Len(t, got, len(tc.want))
			for i, w := range tc.want {
				assert.Equal(t, w, got[i])
				assert.Equal(t, w.Refused || w.Reads == 0, got[i].Unseen(), "unseen")
			}
		})
	}
}

func TestClientOverANetRecordsAWriteDelayedPastItsTimeout(t *testing.T) {
	n := faultnet.New()
	defer n.Close()
	st := NewServer(storage.Options{})
	c1 := &Client{Net: n, Node: "c1", Server: st, Timeout: 50 * time.Millisecond}
	c2 := &Client{Net: n, Node: "c2", Server: st, Timeout: time.Second}
	n.AddRule(faultnet.Rule{From: "c1", To: Name, Match: "storage.WriteReq", Delay: 200 * time.Millisecond, Count: 1})
	require.Error(t, c1.Write("k", 2, 0), "the delayed write times out")
	require.Eventually(t, func() bool { return len(st.LateWrites()) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, c2.Write("k", 3, 0))
	w := st.LateWrites()[0]
	assert.Equal(t, "c1", w.Client)
	assert.GreaterOrEqual(t, w.Landed-w.Sent, 200*time.Millisecond, "it landed after its delay")
	assert.True(t, w.Overwritten)
	assert.Equal(t, "c2", w.By)
	assert.True(t, w.Unseen(), "nobody read it")
}

// TestAWriteHeldByACutLandsAtTheHeal: with connection semantics
// (faultnet.HoldCuts, what a live run uses unless --cuts drop) a write sent
// across a cut times out, waits for the heal and lands then, a late write
// that a read sees; without them the cut drops it and it never lands.
func TestAWriteHeldByACutLandsAtTheHeal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hold  bool
		lands bool
	}{
		{"a cut that holds", true, true},
		{"a cut that drops", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := faultnet.New()
			defer n.Close()
			if tc.hold {
				n.HoldCuts(Name, 5*time.Second)
			}
			st := NewServer(storage.Options{})
			c1 := &Client{Net: n, Node: "c1", Server: st, Timeout: 50 * time.Millisecond}
			c2 := &Client{Net: n, Node: "c2", Server: st, Timeout: time.Second}
			n.Block("c1", Name)
			require.Error(t, c1.Write("k", 2, 0), "the write across the cut times out")
			time.Sleep(100 * time.Millisecond)
			n.Unblock("c1", Name)
			if !tc.lands {
				time.Sleep(100 * time.Millisecond)
				assert.Empty(t, st.LateWrites())
				v, err := c2.Read("k", 0)
				require.NoError(t, err)
				assert.Zero(t, v, "the dropped write never landed")
				return
			}
			require.Eventually(t, func() bool { return len(st.LateWrites()) == 1 }, 5*time.Second, 5*time.Millisecond)
			v, err := c2.Read("k", 0)
			require.NoError(t, err)
			assert.Equal(t, int64(2), v, "the held write landed at the heal")
			w := st.LateWrites()[0]
			assert.Equal(t, "c1", w.Client)
			assert.GreaterOrEqual(t, w.Landed-w.Sent, 100*time.Millisecond, "not before the heal")
		})
	}
}
