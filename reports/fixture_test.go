package reports

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// ms is a history time in milliseconds.
func ms(t float64) int64 { return int64(t * 1e6) }

// historyBuilder collects events in any order and numbers them by time.
type historyBuilder struct{ events []history.Event }

func (b *historyBuilder) add(e history.Event) { b.events = append(b.events, e) }

// op records an operation of process p on node from invoke to completion
// (ms); done is "" for an operation that never completed.
func (b *historyBuilder) op(p int, node, f string, invoke, complete float64, done history.Type, fields history.Event) {
	inv := fields
	inv.Process, inv.Node, inv.Type, inv.F, inv.Time = p, node, history.Invoke, f, ms(invoke)
	if inv.Key == "" {
		inv.Key = "k"
	}
	if f == history.FRead {
		inv.Value = nil
	}
	inv.Deadline = nil
	b.add(inv)
	if done != "" {
		c := fields
		c.Process, c.Node, c.Type, c.F, c.Time, c.Key = p, node, done, f, ms(complete), inv.Key
		b.add(c)
	}
}

// fault records a nemesis fault from start to stop (ms; stop < 0: never).
func (b *historyBuilder) fault(kind string, targets []string, start, stop float64) {
	b.add(history.Event{Process: history.NemesisProcess, Type: history.Start, F: kind, Targets: targets, Time: ms(start), Detail: kind})
	if stop >= 0 {
		b.add(history.Event{Process: history.NemesisProcess, Type: history.Stop, F: kind, Targets: targets, Time: ms(stop), Detail: kind})
	}
}

func (b *historyBuilder) build() []history.Event {
	out := slices.Clone(b.events)
	slices.SortStableFunc(out, func(x, y history.Event) int { return cmp.Compare(x.Time, y.Time) })
	for i := range out {
		out[i].Index = i
	}
	return out
}

// gcPauseHistory is Kleppmann's diagram: c1 takes the lock (token 1, lease
// until 10 s), reads, and is paused for 15 s; its lease runs out, c2 takes
// the lock (token 2), reads, writes and releases; c1 wakes up and writes with
// its old token, which a fenced storage rejects (fenced) or applies (not).
func gcPauseHistory(fenced bool) []history.Event {
	var b historyBuilder
	tok := func(t uint64) *uint64 { return &t }
	b.op(0, "c1", history.FAcquire, 1, 2, history.OK, history.Event{Owner: "c1-1", Token: tok(1), Deadline: history.Ptr(ms(10000))})
	b.op(0, "c1", history.FRead, 3, 4, history.OK, history.Event{Owner: "c1-1", Token: tok(1), Value: history.Ptr[int64](0)})
	b.fault("pause", []string{"c1"}, 5, 15005)
	b.op(1, "c2", history.FAcquire, 6, 10002, history.OK, history.Event{Owner: "c2-1", Token: tok(2), Deadline: history.Ptr(ms(20002))})
	b.op(1, "c2", history.FRead, 10003, 10004, history.OK, history.Event{Owner: "c2-1", Token: tok(2), Value: history.Ptr[int64](0)})
	b.op(1, "c2", history.FWrite, 10005, 10006, history.OK, history.Event{Owner: "c2-1", Token: tok(2), Value: history.Ptr[int64](1)})
	b.op(1, "c2", history.FRelease, 10007, 10008, history.OK, history.Event{Owner: "c2-1", Token: tok(2)})
	write := history.OK
	if fenced {
		write = history.Fail
	}
	b.op(0, "c1", history.FWrite, 15006, 15007, write, history.Event{Owner: "c1-1", Token: tok(1), Value: history.Ptr[int64](1)})
	b.op(0, "c1", history.FRelease, 15008, 15009, history.Fail, history.Event{Owner: "c1-1", Token: tok(1)})
	return b.build()
}

// checkedRun is a Run of events with the verdicts of the two safety checks.
func checkedRun(events []history.Event, schedule any) Run {
	zero := int64(0)
	vs := models.RunAll([]models.Check{models.CriticalSections{Initial: &zero}, models.MutualExclusion{}}, events)
	exit := 0
	if models.Overall(vs) != models.Valid {
		exit = 1
	}
	return Run{
		Command: "locklab run --nemesis-file gc.json --seed 1 --out runs/gc", Seed: 1,
		Config:   map[string]any{"system": "redis", "workload": "fenced-counter", "clients": 2, "storage": "fenced"},
		Schedule: schedule, Events: events, Verdicts: vs, Overall: models.Overall(vs), ExitCode: exit,
		Summary: models.Summarize(events),
		Extra:   map[string]any{"network": NetworkCounters{Sent: 40, Delivered: 38, Dropped: 2}},
	}
}

// GCPauseRun is the checked run of gcPauseHistory with its schedule, for the
// tests here and in package reports_test.
func GCPauseRun(fenced bool) Run {
	return checkedRun(gcPauseHistory(fenced), map[string]any{"faults": []any{map[string]any{
		"kind": "pause", "targets": []string{"c1"}, "duration": "15s",
		"after": map[string]any{"node": "c1", "f": "read"}}}})
}

// longHistory is a synthetic fenced-counter history: clients take turns, each
// section an acquire, a read, a write and a release with latencies drawn
// log-uniformly from 0.5 ms to 2 s, and a pause every minute.
func longHistory(clients int, length time.Duration) []history.Event {
	var b historyBuilder
	rng := rand.New(rand.NewPCG(1, 2))
	lat := func() float64 { return 0.5 * math.Pow(4000, rng.Float64()) }
	t, token := 0.0, uint64(0)
	end := float64(length.Milliseconds())
	for i := 0; t < end; i++ {
		node, p := "c"+strconv.Itoa(i%clients+1), i%clients
		token++
		tk := token
		fields := history.Event{Owner: node + "-" + strconv.Itoa(i), Token: &tk}
		acq := fields
		acq.Deadline = history.Ptr(ms(t + 10000))
		steps := []struct {
			f string
			e history.Event
		}{{history.FAcquire, acq}, {history.FRead, fields}, {history.FWrite, fields}, {history.FRelease, fields}}
		for _, s := range steps {
			d := lat()
			e := s.e
			if s.f != history.FAcquire && s.f != history.FRelease {
				e.Value = history.Ptr(int64(i))
			}
			b.op(p, node, s.f, t, t+d, history.OK, e)
			t += d + 0.01
		}
		if i%200 == 0 {
			b.fault("pause", []string{node}, t, t+500)
		}
	}
	return b.build()
}
