package models

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// synth describes a synthetic fenced-counter history: clients queue for one
// lock (every client's next acquire is invoked as soon as it released, so
// acquires overlap many sections), and each holder reads the counter, writes
// it plus one with its token and releases. Operations are invoke/completion
// pairs of every kind (acquire, read, write, release).
type synth struct {
	ops     int     // operations in all, about
	clients int     // default 5
	unknown float64 // share of writes with an unknown outcome (half of them applied)
	// lostUpdateAt, when positive, is the section at which a second client is
	// granted the lock while the first still holds it: a lost update.
	lostUpdateAt int
	// inversionAt, when positive, is the grant whose token goes backwards.
	inversionAt int
	seed        uint64
}

type synthWriter struct {
	events []history.Event
	now    int64
	next   int
}

func (w *synthWriter) emit(e history.Event) {
	w.now += 1000 + int64(len(w.events)%7)*100
	e.Index, e.Time = len(w.events), w.now
	w.events = append(w.events, e)
}

type synthClient struct {
	node    string
	proc    int
	pending bool
}

func (s synth) events() []history.Event {
	if s.clients == 0 {
		s.clients = 5
	}
	r := rand.New(rand.NewPCG(s.seed, 99))
	w := &synthWriter{}
	queue := make([]*synthClient, s.clients)
	for i := range queue {
		queue[i] = &synthClient{node: fmt.Sprintf("c%d", i+1), proc: w.next}
		w.next++
		w.emit(history.Event{Process: queue[i].proc, Node: queue[i].node, Type: history.Invoke, F: history.FAcquire, Key: "k"})
	}
	var counter int64
	token := uint64(0)
	grant := func(c *synthClient, n int) uint64 {
		token++
		t := token
		if n == s.inversionAt {
			t = token - 3
		}
		w.emit(history.Event{Process: c.proc, Node: c.node, Type: history.OK, F: history.FAcquire, Key: "k",
			Owner: fmt.Sprintf("%s-%d", c.node, n), Token: history.Ptr(t), Deadline: history.Ptr(w.now + int64(10*time.Second))})
		return t
	}
	read := func(c *synthClient, tok uint64) int64 {
		w.emit(history.Event{Process: c.proc, Node: c.node, Type: history.Invoke, F: history.FRead, Key: "k", Token: history.Ptr(tok)})
		w.emit(history.Event{Process: c.proc, Node: c.node, Type: history.OK, F: history.FRead, Key: "k", Token: history.Ptr(tok), Value: history.Ptr(counter)})
		return counter
	}
	write := func(c *synthClient, tok uint64, v int64, maybeUnknown bool) {
		w.emit(history.Event{Process: c.proc, Node: c.node, Type: history.Invoke, F: history.FWrite, Key: "k", Token: history.Ptr(tok), Value: history.Ptr(v)})
		typ := history.OK
		if maybeUnknown && r.Float64() < s.unknown {
			typ = history.Info
		}
		if typ == history.OK || r.IntN(2) == 0 {
			counter = v
		}
		w.emit(history.Event{Process: c.proc, Node: c.node, Type: typ, F: history.FWrite, Key: "k", Token: history.Ptr(tok), Value: history.Ptr(v)})
		if typ == history.Info {
			c.proc = w.next
			w.next++
		}
	}
	release := func(c *synthClient, n int, tok uint64) {
		owner := fmt.Sprintf("%s-%d", c.node, n)
		w.emit(history.Event{Process: c.proc, Node: c.node, Type: history.Invoke, F: history.FRelease, Key: "k", Owner: owner, Token: history.Ptr(tok)})
		w.emit(history.Event{Process: c.proc, Node: c.node, Type: history.OK, F: history.FRelease, Key: "k", Owner: owner, Token: history.Ptr(tok)})
		w.emit(history.Event{Process: c.proc, Node: c.node, Type: history.Invoke, F: history.FAcquire, Key: "k"})
	}
	for n := 1; len(w.events) < 2*s.ops; n++ {
		a := queue[0]
		queue = append(queue[1:], a)
		tokA := grant(a, n)
		v := read(a, tokA)
		if n == s.lostUpdateAt {
			b := queue[0]
			queue = append(queue[1:], b)
			tokB := grant(b, n+1)
			vb := read(b, tokB)
			write(b, tokB, vb+1, false)
			release(b, n+1, tokB)
			write(a, tokA, v+1, false)
			release(a, n, tokA)
			n++
			continue
		}
		write(a, tokA, v+1, true)
		release(a, n, tokA)
	}
	return w.events
}

func benchCheck(b *testing.B, c Check, events []history.Event, want Result) {
	b.Helper()
	b.ReportAllocs()
	ops := len(events) / 2
	b.ResetTimer()
	for b.Loop() {
		v := Run(c, events)
		if v.Result != want {
			b.Fatalf("%s: %s: %s", c.Name(), v.Result, v.Reason)
		}
	}
	b.ReportMetric(float64(ops), "ops")
}

var (
	bench100kValid   = synth{ops: 100_000, seed: 1}
	bench100kInvalid = synth{ops: 100_000, seed: 1, lostUpdateAt: 20_000, inversionAt: 20_000}
)

func BenchmarkCriticalSections100kValid(b *testing.B) {
	benchCheck(b, CriticalSections{Initial: history.Ptr(int64(0))}, bench100kValid.events(), Valid)
}

func BenchmarkCriticalSections100kInvalid(b *testing.B) {
	benchCheck(b, CriticalSections{Initial: history.Ptr(int64(0))}, bench100kInvalid.events(), Invalid)
}

func BenchmarkCriticalSections100kUnknownWrites(b *testing.B) {
	benchCheck(b, CriticalSections{Initial: history.Ptr(int64(0))}, synth{ops: 100_000, seed: 2, unknown: 0.1}.events(), Valid)
}

func BenchmarkFencingTokens100kValid(b *testing.B) {
	benchCheck(b, FencingTokens{StorageFenced: true}, bench100kValid.events(), Valid)
}

func BenchmarkFencingTokens100kInvalid(b *testing.B) {
	benchCheck(b, FencingTokens{StorageFenced: true}, bench100kInvalid.events(), Invalid)
}

func BenchmarkLease100kValid(b *testing.B) {
	benchCheck(b, LockService{Leases: true}, bench100kValid.events(), Valid)
}

func BenchmarkLease100kInvalid(b *testing.B) {
	benchCheck(b, LockService{Leases: true}, bench100kInvalid.events(), Invalid)
}

func BenchmarkMutualExclusion100kValid(b *testing.B) {
	benchCheck(b, MutualExclusion{}, bench100kValid.events(), Valid)
}

func BenchmarkLiveness100kValid(b *testing.B) {
	benchCheck(b, Availability{}, bench100kValid.events(), Valid)
}

// TestIndeterminateWritesDoNotHang: 10,000 operations, 10% of the writes of
// unknown outcome. The check finishes within its default budget, or says
// unknown naming the budget; it never hangs and never says valid wrongly.
func TestIndeterminateWritesDoNotHang(t *testing.T) {
	for _, s := range []synth{
		{ops: 10_000, unknown: 0.1, seed: 3},                    // 10% of the writes
		{ops: 10_000, unknown: 0.4, seed: 3},                    // 10% of all operations (a write is one in four)
		{ops: 10_000, unknown: 0.4, seed: 4, lostUpdateAt: 900}, // and a lost update
	} {
		events := s.events()
		v := Run(CriticalSections{Initial: history.Ptr(int64(0))}, events)
		t.Logf("%d operations, %.0f writes of unknown outcome: %s (%s), %.0f search steps",
			len(events)/2, v.Stats["write-outcome-unknown"], v.Result, v.Reason, v.Stats["search-steps"])
		switch {
		case v.Result == Unknown:
			assert.NotEmpty(t, v.Exhausted, "an unknown result names the budget: %s", v.Reason)
		case s.lostUpdateAt > 0:
			assert.Equal(t, Invalid, v.Result)
		default:
			assert.Equal(t, Valid, v.Result)
		}
	}
}

var syntheticOut = flag.String("synthetic-out", "", "write a synthetic 100k-operation history (valid, and -invalid) to this path prefix and stop")

// TestWriteSyntheticHistories writes the benchmark histories as files for
// `locklab check` (go test ./models -run TestWriteSynthetic -synthetic-out /tmp/synth).
func TestWriteSyntheticHistories(t *testing.T) {
	if *syntheticOut == "" {
		t.Skip("no -synthetic-out")
	}
	for name, s := range map[string]synth{"-valid.jsonl": bench100kValid, "-invalid.jsonl": bench100kInvalid, // determinism:ok files written independently
		"-unknown10k.jsonl": {ops: 10_000, unknown: 0.4, seed: 3}} {
		f, err := os.Create(*syntheticOut + name)
		require.NoError(t, err)
		require.NoError(t, history.Write(f, s.events()))
		require.NoError(t, f.Close())
	}
}

// BenchmarkSuite100kValid runs every check that applies to a valid
// 100,000-operation history at once, as a run does (RunAll: the history is
// paired once and every check reads the paired form).
func BenchmarkSuite100kValid(b *testing.B) {
	events := bench100kValid.events()
	cfg := Config{InitialKnown: true, StorageFenced: true}
	checks, _, err := cfg.Select(nil, events)
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, v := range RunAll(checks, events) {
			if v.Result != Valid {
				b.Fatalf("%s: %s: %s", v.Check, v.Result, v.Reason)
			}
		}
	}
	b.ReportMetric(float64(len(events)/2), "ops")
}
