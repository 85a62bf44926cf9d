package libmode

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
)

// TestShrinkKeepsThePause: of four faults only the pause in the critical
// section loses an update; shrinking keeps it alone, shortened, with fewer
// clients and a shorter run, and the printed replay gives the same history.
func TestShrinkKeepsThePause(t *testing.T) {
	cfg := setLockConfig(false)
	cfg.Faults = []Fault{
		Partition{At: 500 * time.Millisecond, For: 300 * time.Millisecond, Clients: []string{"c3"}},
		PauseInCriticalSection{After: 2 * time.Second, For: 3 * time.Second},
		ClockJump{Instance: "redis-1", At: 8 * time.Second, By: 100 * time.Millisecond},
		Delay{At: time.Second, For: 500 * time.Millisecond, By: 20 * time.Millisecond, Clients: []string{"c2"}},
	}
	found := Run(t, cfg)
	require.False(t, found.Safe(), found.Summary())
	require.Empty(t, found.ScheduleErr)
	s, err := Shrink(t, found, ShrinkOptions{})
	require.NoError(t, err)
	t.Log(s.Report())
	assert.Equal(t, Target{Check: "critical-sections", Kind: "gc-pause"}, s.Target)
	require.Len(t, s.Result.Schedule.Faults, 1)
	f := s.Result.Schedule.Faults[0]
	assert.Equal(t, nemesis.Pause, f.Kind)
	require.NotNil(t, f.After)
	assert.Equal(t, "read", f.After.F)
	assert.Less(t, time.Duration(f.Duration), 3*time.Second)
	assert.Greater(t, time.Duration(f.Duration), 700*time.Millisecond, "the pause must outlive the 1 s lease, less the hold")
	assert.Equal(t, 2, s.Result.Config.Clients)
	assert.Less(t, s.Result.Config.Duration, cfg.Duration)
	assert.True(t, s.Target.Fails(s.Result))
	assert.LessOrEqual(t, s.Runs, 120)

	// the replay: the seed, clients and time set, the schedule given
	again := Replay(t, s.Result.Config, string(s.Result.Schedule.JSON()))
	assert.True(t, sameEvents(s.Result.Events, again.Events), "the replay gives the same history")
	assert.Contains(t, s.Replay(), "libmode.Replay(t, cfg, `{\"faults\":[{\"kind\":\"pause\"")

	// the same run shrinks the same way in as many runs
	s2, err := Shrink(t, found, ShrinkOptions{})
	require.NoError(t, err)
	assert.Equal(t, s.Runs, s2.Runs)
	assert.Equal(t, string(s.Result.Schedule.JSON()), string(s2.Result.Schedule.JSON()))
}

func TestShrinkRefuses(t *testing.T) {
	ok := Run(t, setLockConfig(false))
	_, err := Shrink(t, ok, ShrinkOptions{})
	assert.ErrorIs(t, err, ErrNotFailing)

	cfg := setLockConfig(false)
	cfg.Faults = []Fault{
		PauseInCriticalSection{After: 2 * time.Second, For: 3 * time.Second},
		Partition{At: 500 * time.Millisecond, For: 300 * time.Millisecond, Clients: []string{"c3"}, Reject: true},
	}
	bad := Run(t, cfg)
	require.False(t, bad.Safe())
	_, err = Shrink(t, bad, ShrinkOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fault 1")
	assert.Contains(t, err.Error(), "rejecting cut")
}

// TestScheduleForm: library mode's faults and their schedule form run the
// same, and what the form cannot say in library mode is refused naming
// the fault.
func TestScheduleForm(t *testing.T) {
	cfg := faulty(5)
	cfg.Faults = cfg.Faults[:5] // the crash without persistence has a form too; keep the run short
	own := Run(t, cfg)
	require.Empty(t, own.ScheduleErr)
	replayed := Replay(t, cfg, string(own.Schedule.JSON()))
	for _, v := range own.Verdicts {
		assert.Equal(t, v.Result, replayed.Verdict(v.Check), v.Check)
	}
	assert.Equal(t, len(own.LostUpdates), len(replayed.LostUpdates))

	for _, tc := range []struct {
		f    nemesis.Fault
		want string
	}{
		{nemesis.Fault{Kind: nemesis.ClockDrift, Targets: []string{"redis-1"}, Drift: 0.1}, "clock-drift is not built"},
		{nemesis.Fault{Kind: nemesis.Partition, From: []string{"c1"}, To: []string{"redis-1"}}, "one-way cut"},
		{nemesis.Fault{Kind: nemesis.Pause, Targets: []string{"redis-1"}, Duration: nemesis.Duration(time.Second)}, "pauses one client"},
		{nemesis.Fault{Kind: nemesis.Crash, Targets: []string{"redis-1"}, Until: &nemesis.Trigger{Node: "c2", F: "acquire"}}, "end anchor"},
		{nemesis.Fault{Kind: nemesis.Pause, Targets: []string{"c1"}, Duration: nemesis.Duration(time.Second), After: &nemesis.Trigger{Node: "c7", F: "read"}}, `no client "c7"`},
		{nemesis.Fault{Kind: nemesis.Delay, From: []string{"c1"}, To: []string{"storage"}, Amount: nemesis.Duration(time.Second)}, "between clients"},
		{nemesis.Fault{Kind: "sneeze"}, "unknown fault kind"},
	} {
		_, err := FromSchedule(setLockConfig(false), nemesis.Schedule{Faults: []nemesis.Fault{tc.f}})
		require.Error(t, err, tc.want)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// TestAnchoredPause: a pause of c1 from its read until c2's read (invoked)
// + 5 ms loses an update whatever the pause's length would have had to
// be; ended at c2's next try (a refused acquire, while c1's lease runs),
// it does not.
func TestAnchoredPause(t *testing.T) {
	run := func(until *nemesis.Trigger) Result {
		cfg := setLockConfig(false)
		cfg.Clients = 2
		cfg.Faults = []Fault{Scheduled{nemesis.Fault{Kind: nemesis.Pause, Targets: []string{"c1"}, At: nemesis.Duration(time.Second),
			After: &nemesis.Trigger{Node: "c1", F: "read"}, Until: until}}}
		return Run(t, cfg)
	}
	lost := run(&nemesis.Trigger{Node: "c2", F: "read", Type: "invoke", Delay: nemesis.Duration(5 * time.Millisecond)})
	t.Log(lost.Summary())
	assert.Equal(t, models.Invalid, lost.Verdict("critical-sections"))
	assert.Contains(t, lost.Kinds, "gc-pause")
	early := run(&nemesis.Trigger{Node: "c2", F: "acquire", Type: "invoke"})
	t.Log(early.Summary())
	assert.Equal(t, models.Valid, early.Verdict("critical-sections"), "c1 writes within its lease")
}
