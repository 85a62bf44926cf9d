package nemesis

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/sim"
)

type ping struct{}

// TestOutcomesSayWhichFaultsDidNotFire: every way a valid fault can miss is
// recorded as "did not fire", with why; the faults that took effect fired.
func TestOutcomesSayWhichFaultsDidNotFire(t *testing.T) {
	r := newRig()
	s := time.Second
	after := func(f string, typ string, nth int, delay time.Duration) *Trigger {
		return &Trigger{Node: "a", F: f, Type: typ, Nth: nth, Delay: Duration(delay)}
	}
	faults := []Fault{
		{Kind: Pause, At: Duration(s), Duration: Duration(s), Targets: []string{"c"}},
		{Kind: Pause, At: Duration(70 * s), Duration: Duration(s), Targets: []string{"c"}},
		{Kind: Pause, Duration: Duration(s), Targets: []string{"c"}, After: after("acquire", "", 5, 0)},
		{Kind: Pause, Duration: Duration(s), Targets: []string{"c"}, After: after("release", "", 0, 0)},
		{Kind: Pause, Duration: Duration(s), Targets: []string{"c"}, After: after("acquire", "fail", 0, 0), At: Duration(s)},
		{Kind: Pause, Duration: Duration(s), Targets: []string{"c"}, After: after("acquire", "", 0, 20*s)},
		{Kind: Pause, Duration: Duration(s), Targets: []string{"c"}, After: after("acquire", "", 0, 0), At: Duration(30 * s)},
		{Kind: Delay, From: []string{"a"}, To: []string{"b"}, Amount: Duration(s), Match: "nemesis.other", Duration: Duration(5 * s)},
		{Kind: Delay, From: []string{"a"}, To: []string{"b"}, Amount: Duration(s), Match: "nemesis.ping", Count: 1},
		{Kind: Delay, From: []string{"c"}, To: []string{"b"}, Amount: Duration(s)},
		{Kind: Partition, Groups: [][]string{{"a"}, {"a"}}, Duration: Duration(s)},
		{Kind: Crash, Targets: []string{"nobody"}, At: Duration(2 * s)},
		{Kind: Pause, Duration: Duration(s), Targets: []string{"c"}, After: after("acquire", "", 2, 0)},
	}
	nem, err := Install(r.w, r.log, Schedule{Faults: faults}, Env{Resolve: r.resolve})
	require.NoError(t, err)
	rec := r.log.NewRecorder("a", clockOf{r.a})
	r.a.Spawn("a", func(p *sim.Proc) {
		for range 3 {
			rec.Invoke(history.Event{F: "acquire"}).Complete(history.OK, history.Event{})
			p.Send(r.b.ID(), ping{})
			p.Sleep(time.Second)
		}
	})
	r.w.RunUntil(10 * s)
	var got []string
	for _, o := range nem.Outcomes(10 * s) {
		got = append(got, fmt.Sprintf("%d %s %v %s", o.Fault, o.Kind, o.Fired, o.DidNotFire))
	}
	assert.Equal(t, []string{
		"0 pause true ",
		"1 pause false it was due at 1m10s, after the run ended at 10s",
		"2 pause false its trigger never happened: a recorded 3 acquire ok, and the fault waits for the 5th",
		"3 pause false its trigger never happened: a recorded no release ok",
		"4 pause false its trigger never happened: a recorded no acquire fail at or after 1s",
		"5 pause false its trigger happened at 0s and it was due 20s later, after the run ended at 10s",
		"6 pause false its trigger was to be armed at 30s, after the run ended at 10s",
		"7 delay false it delayed no message: no nemesis.other message went from a to b from 0s to 5s",
		"8 delay true ",
		"9 delay false it delayed no message: no message went from c to b from 0s to the end of the run",
		"10 partition false it cut no link when it started at 0s (split [a] | [a])",
		"11 crash false its targets [nobody] named no node when it started at 2s",
		"12 pause true ",
	}, got)
}
