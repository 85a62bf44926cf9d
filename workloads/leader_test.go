package workloads

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lockapi"
)

// fakeTime is a client's virtual clock: Sleep advances it, and a sleep that
// reaches end stops the program (a panic the test recovers).
type fakeTime struct{ now, end time.Duration }

type endOfRun struct{}

func (f *fakeTime) Name() string        { return "c1" }
func (f *fakeTime) Mono() time.Duration { return f.now }
func (f *fakeTime) Wall() time.Duration { return f.now }
func (f *fakeTime) Rand() *rand.Rand    { return rand.New(rand.NewPCG(1, 2)) }
func (f *fakeTime) Sleep(d time.Duration) {
	f.now += d
	if f.now >= f.end {
		panic(endOfRun{})
	}
}
func (f *fakeTime) Now() time.Duration                   { return f.now }
func (f *fakeTime) Local() time.Duration                 { return f.now }
func (f *fakeTime) TrueAt(l time.Duration) time.Duration { return l }

// fakeLock grants at once (after 10 ms), each grant with a new token and,
// when lease is set, a deadline lease after it.
type fakeLock struct {
	t       *fakeTime
	lease   time.Duration
	grants  int
	grantAt time.Duration
}

func (l *fakeLock) Acquire(key string, _ time.Duration) (lockapi.Lease, error) {
	l.t.Sleep(10 * time.Millisecond)
	l.grants++
	l.grantAt = l.t.now
	g := lockapi.Lease{Key: key, Owner: fmt.Sprintf("c1#%d", l.grants), Token: uint64(l.grants), HasToken: true}
	if l.lease > 0 {
		g.Deadline = l.t.now + l.lease
	}
	return g, nil
}

func (l *fakeLock) Release(lockapi.Lease) error { return nil }

// fakeLeader is a leader elector whose every leadership is lost after
// lostAfter (its lease not renewed): a release then fails, not held.
type fakeLeader struct {
	fakeLock
	lostAfter time.Duration
}

func (l *fakeLeader) Leading(string) bool { return l.t.now < l.grantAt+l.lostAfter }

func (l *fakeLeader) Release(lockapi.Lease) error {
	if !l.Leading(LeaderKey) {
		return fmt.Errorf("stopped leading: %w", lockapi.ErrNotHeld)
	}
	return nil
}

// fakeStore is a counter cell.
type fakeStore struct{ v int64 }

func (s *fakeStore) Read(string, uint64) (int64, error)      { return s.v, nil }
func (s *fakeStore) Write(_ string, v int64, _ uint64) error { s.v = v; return nil }

// term is one leadership as the history tells it: when it began and
// ended (the release), the release's outcome and the writes made.
type term struct {
	start, end time.Duration
	release    history.Type
	writes     int
}

func terms(events []history.Event) []term {
	var out []term
	for _, e := range events {
		switch {
		case e.F == history.FAcquire && e.Type == history.OK:
			out = append(out, term{start: time.Duration(e.Time), release: history.Invoke})
		case e.F == history.FWrite && e.Type == history.OK:
			out[len(out)-1].writes++
		case e.F == history.FRelease && e.Type != history.Invoke:
			out[len(out)-1].end, out[len(out)-1].release = time.Duration(e.Time), e.Type
		}
	}
	return out
}

func TestALeaderWorksUntilItStopsLeadingThenRunsAgain(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		opts map[string]string
		lock func(*fakeTime) lockapi.Lock
		want []term
	}{
		{"an elector that loses its lease after 1 s: the release fails, the candidate runs again after work",
			nil, func(f *fakeTime) lockapi.Lock { return &fakeLeader{fakeLock{t: f}, time.Second} },
			// rounds of 100 ms hold + 500 ms work from 10 ms: the third
			// starts after the leadership ended, so there are two.
			[]term{{10 * ms, 1210 * ms, history.Fail, 2}, {1720 * ms, 2920 * ms, history.Fail, 2}}},
		{"told to stop after 700 ms: the release succeeds",
			map[string]string{"term": "700ms"}, func(f *fakeTime) lockapi.Lock { return &fakeLeader{fakeLock{t: f}, time.Hour} },
			[]term{{10 * ms, 1210 * ms, history.OK, 2}, {1720 * ms, 2920 * ms, history.OK, 2}}},
		{"a lock that is no elector leads until its lease's deadline as granted",
			map[string]string{"hold": "0s", "work": "1s"}, func(f *fakeTime) lockapi.Lock { return &fakeLock{t: f, lease: 1500 * ms} },
			[]term{{10 * ms, 2010 * ms, history.OK, 2}}},
		{"a lock without lease nor elector leads for good",
			map[string]string{"hold": "0s", "work": "1s"}, func(f *fakeTime) lockapi.Lock { return &fakeLock{t: f} },
			[]term{{10 * ms, 0, history.Invoke, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := LeaderElectionTable.Parse(tc.opts)
			require.NoError(t, err)
			f := &fakeTime{end: 3 * time.Second}
			log := history.NewLog()
			c := Client{Env: f, Lock: tc.lock(f), Store: &fakeStore{}, Rec: log.NewRecorder("c1", f)}
			func() {
				defer func() {
					if r := recover(); r != nil {
						require.Equal(t, endOfRun{}, r)
					}
				}()
				w.Run(c)
			}()
			assert.Equal(t, tc.want, terms(log.Events()))
		})
	}
}

func TestLeaderElectionOptions(t *testing.T) {
	w := DefaultLeaderElection()
	assert.Equal(t, LeaderElection{Hold: 100 * time.Millisecond, Work: 500 * time.Millisecond, Wait: time.Minute}, w,
		"a leader is never told to stop by default")
	require.NoError(t, w.Set("term", "30s"))
	assert.Equal(t, 30*time.Second, w.Term)
	assert.ErrorContains(t, w.Set("work", "-1s"), `leader-election option work="-1s": must not be negative`)
	assert.ErrorContains(t, w.Set("keys", "2"), `leader-election has no option "keys"`)
}
