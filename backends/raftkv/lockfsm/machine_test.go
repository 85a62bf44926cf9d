package lockfsm

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const s = int64(time.Second)

// step is one command and what it must return.
type step struct {
	cmd      Command
	code     Code
	success  bool
	acquirer string // owner reported
	token    uint64
	acquires int
	remain   time.Duration
}

func lock(acq string, at int64) Command {
	return Command{Op: OpTryLock, Key: "k", Acquirer: acq, Lease: 10 * time.Second, Stamp: at, Context: []byte(acq + "-ctx")}
}
func unlock(acq string, at int64) Command {
	return Command{Op: OpUnlock, Key: "k", Acquirer: acq, Stamp: at}
}
func keep(acq string, at int64) Command {
	return Command{Op: OpKeepLease, Key: "k", Acquirer: acq, Lease: 10 * time.Second, Stamp: at}
}
func get(at int64) Command { return Command{Op: OpGet, Key: "k", Stamp: at} }

func TestLockStateMachine(t *testing.T) {
	tests := []struct {
		name   string
		config Config
		steps  []step
	}{
		{"a free key is granted with a new token; others are refused and told who holds it", Config{}, []step{
			{lock("a", 0), FirstTimeSuccess, true, "a", 1, 1, 10 * time.Second},
			{lock("b", 4*s), HeldByOther, false, "a", 1, 1, 6 * time.Second},
			{get(5 * s), Owned, true, "a", 1, 1, 5 * time.Second},
		}},
		{"an expired owner is replaced with a new token", Config{}, []step{
			{lock("a", 0), FirstTimeSuccess, true, "a", 1, 1, 10 * time.Second},
			{lock("b", 11*s), NewAcquireSuccess, true, "b", 2, 1, 10 * time.Second},
			{keep("a", 12*s), KeepLeaseFail, false, "b", 2, 1, 9 * time.Second},
			{unlock("a", 12*s), HeldByOther, false, "b", 2, 1, 9 * time.Second},
		}},
		{"the deadline itself still belongs to the owner", Config{}, []step{
			{lock("a", 0), FirstTimeSuccess, true, "a", 1, 1, 10 * time.Second},
			{lock("b", 10*s), HeldByOther, false, "a", 1, 1, 0},
		}},
		{"reentrant acquires count, keep the token and extend the lease; unlock counts down", Config{}, []step{
			{lock("a", 0), FirstTimeSuccess, true, "a", 1, 1, 10 * time.Second},
			{lock("a", 5*s), ReentrantSuccess, true, "a", 1, 2, 10 * time.Second},
			{lock("b", 12*s), HeldByOther, false, "a", 1, 2, 3 * time.Second},
			{unlock("a", 13*s), UnlockSuccess, true, "a", 1, 1, 2 * time.Second},
			{lock("b", 13*s), HeldByOther, false, "a", 1, 1, 2 * time.Second},
			{unlock("a", 14*s), UnlockSuccess, true, "a", 1, 0, 1 * time.Second},
			{lock("b", 14*s), FirstTimeSuccess, true, "b", 2, 1, 10 * time.Second},
		}},
		{"unlock-delete frees a reentrant lock at the first release", Config{Unlock: UnlockDelete}, []step{
			{lock("a", 0), FirstTimeSuccess, true, "a", 1, 1, 10 * time.Second},
			{lock("a", 1*s), ReentrantSuccess, true, "a", 1, 2, 10 * time.Second},
			{unlock("a", 2*s), UnlockSuccess, true, "a", 1, 0, 9 * time.Second},
			{lock("b", 2*s), FirstTimeSuccess, true, "b", 2, 1, 10 * time.Second},
		}},
		{"keep-lease renews only a live lease of its owner", Config{}, []step{
			{keep("a", 0), KeepLeaseFail, false, "", 0, 0, 0},
			{lock("a", 0), FirstTimeSuccess, true, "a", 1, 1, 10 * time.Second},
			{keep("a", 8*s), KeepLeaseSuccess, true, "a", 1, 1, 10 * time.Second},
			{lock("b", 15*s), HeldByOther, false, "a", 1, 1, 3 * time.Second},
			{keep("a", 19*s), KeepLeaseFail, false, "a", 1, 1, -1 * time.Second},
			{keep("b", 19*s), KeepLeaseFail, false, "a", 1, 1, -1 * time.Second},
		}},
		{"unlocking a free key succeeds with count 0 (RheaKV)", Config{}, []step{
			{unlock("a", 0), UnlockSuccess, true, "a", 0, 0, 0},
			{get(0), Free, true, "", 0, 0, 0},
		}},
		{"a stamp from a clock far ahead expires a live lease early", Config{}, []step{
			{lock("a", 100*s), FirstTimeSuccess, true, "a", 1, 1, 10 * time.Second},
			{lock("b", 160*s), NewAcquireSuccess, true, "b", 2, 1, 10 * time.Second},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(tc.config)
			for i, st := range tc.steps {
				r, err := m.Apply(st.cmd)
				require.NoError(t, err, "step %d", i)
				assert.Equal(t, st.code, r.Code, "step %d code", i)
				assert.Equal(t, st.success, r.Success, "step %d success", i)
				assert.Equal(t, st.acquirer, r.Owner.Acquirer, "step %d owner", i)
				assert.Equal(t, st.token, r.Owner.Token, "step %d token", i)
				assert.Equal(t, st.acquires, r.Owner.Acquires, "step %d acquires", i)
				assert.Equal(t, st.remain, r.Remaining, "step %d remaining", i)
			}
		})
	}
}

func TestRefusalReportsTheOwnersContext(t *testing.T) {
	m := New(Config{})
	_, err := m.Apply(lock("a", 0))
	require.NoError(t, err)
	r, err := m.Apply(lock("b", s))
	require.NoError(t, err)
	assert.Equal(t, "a-ctx", string(r.Owner.Context))
}

func TestSessionsMakeRetriesExactlyOnce(t *testing.T) {
	m := New(Config{})
	first := lock("a", 0)
	first.Session, first.Seq = "a#main", 1
	r1, err := m.Apply(first)
	require.NoError(t, err)
	retry := first
	retry.Stamp = 3 * s // the retry went through another leader
	r2, err := m.Apply(retry)
	require.NoError(t, err)
	assert.True(t, r2.Duplicate)
	assert.Equal(t, FirstTimeSuccess, r2.Code, "a retry is not a reentrant acquire")
	assert.Equal(t, r1.Owner, r2.Owner)
	next := unlock("a", 4*s)
	next.Session, next.Seq = "a#main", 2
	_, err = m.Apply(next)
	require.NoError(t, err)
	late := first // the first request, delivered again after a later one
	r3, err := m.Apply(late)
	require.NoError(t, err)
	assert.Equal(t, Stale, r3.Code)
	g, err := m.Apply(get(4 * s))
	require.NoError(t, err)
	assert.Equal(t, Free, g.Code, "the stale try-lock had no effect")
}

func TestInvalidCommandsAreRefusedDeterministically(t *testing.T) {
	tests := []struct {
		cmd  Command
		want string
	}{
		{Command{Op: "steal", Key: "k", Acquirer: "a"}, `unknown op "steal"`},
		{Command{Op: OpTryLock, Key: "k", Acquirer: "a"}, "lease must be positive"},
		{Command{Op: OpUnlock, Acquirer: "a"}, "without a key"},
		{Command{Op: OpUnlock, Key: "k"}, "without an acquirer"},
	}
	for _, tc := range tests {
		m := New(Config{})
		_, err := m.Apply(tc.cmd)
		assert.ErrorIs(t, err, ErrInvalid)
		assert.ErrorContains(t, err, tc.want)
		assert.Empty(t, m.Keys())
	}
}

func TestSnapshotRoundTripIsDeterministic(t *testing.T) {
	m := New(Config{Unlock: UnlockDelete})
	for i, acq := range []string{"z", "a", "m"} {
		c := lock(acq, int64(i)*s)
		c.Key = acq + "-key"
		c.Session, c.Seq = acq, 1
		_, err := m.Apply(c)
		require.NoError(t, err)
	}
	b1, err := m.Snapshot()
	require.NoError(t, err)
	restored := New(Config{})
	require.NoError(t, restored.Restore(b1))
	b2, err := restored.Snapshot()
	require.NoError(t, err)
	assert.Equal(t, string(b1), string(b2))
	assert.Equal(t, []string{"a-key", "m-key", "z-key"}, restored.Keys())
	assert.Equal(t, uint64(3), restored.Fence())
	assert.Equal(t, UnlockDelete, restored.Config().Unlock)
	assert.Error(t, restored.Restore([]byte(`{"locks":{},"surprise":1}`)))
	assert.ErrorContains(t, restored.Restore([]byte(`{"locks":{},"sessions":{"a":null}}`)), `session "a" is null`)
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	c := Command{Op: OpTryLock, Key: "k", Acquirer: "c1:k", Lease: time.Second, Context: []byte("c1"), Stamp: 42, Session: "c1", Seq: 7}
	got, err := Decode(Encode(c))
	require.NoError(t, err)
	assert.Equal(t, c, got)
	_, err = Decode(append(Encode(c), 0))
	assert.ErrorContains(t, err, "1 bytes of trailing data")
	b := Encode(c)
	_, err = Decode(b[:len(b)-3])
	assert.ErrorContains(t, err, "truncated")
	_, err = Decode(Encode(Command{Op: "steal"}))
	assert.ErrorContains(t, err, "unknown op number 4")
	_, err = Decode([]byte{9})
	assert.ErrorContains(t, err, "version 9")
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(lock("a", 1)))
	f.Add(Encode(Command{Op: OpUnlock, Key: "k", Acquirer: "a", Stamp: -1, Session: "s", Seq: 1 << 40}))
	f.Add([]byte{1, 0, 200})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(data)
		if err != nil {
			return
		}
		again, err := Decode(Encode(c))
		if err != nil {
			t.Fatalf("re-decoding an encoded command failed: %v", err)
		}
		if !reflect.DeepEqual(c, again) {
			t.Fatalf("round trip changed the command: %+v -> %+v", c, again)
		}
		m := New(Config{})
		_, _ = m.Apply(again) // must not panic
	})
}
