package opt

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type colour string

type inner struct{ Hold time.Duration }

type sample struct {
	inner
	TTL    time.Duration
	Fenced bool
	Count  int
	Big    int64
	Drift  float64
	Colour colour
	Sizes  []int
	Leader string
}

var innerOptions = []Option[inner]{
	Var("hold", "time between read and write", "100ms", func(o *inner) *time.Duration { return &o.Hold }, NonNegative),
}

var sampleTable = Table[sample]{Owner: "sample", Options: append([]Option[sample]{
	Var("ttl", "the lease", "10s", func(o *sample) *time.Duration { return &o.TTL }, Positive),
	Var("fenced", "take tokens", "false", func(o *sample) *bool { return &o.Fenced }, Bool),
	Var("count", "how many", "3", func(o *sample) *int { return &o.Count }, IntChoice(3, 5)),
	Var("big", "a big one", "4", func(o *sample) *int64 { return &o.Big }, Range[int64](0, 1_000_000)),
	Var("drift", "clock drift allowance", "0.01", func(o *sample) *float64 { return &o.Drift }, Fraction(0, 1)),
	Var("colour", "which colour", "red", func(o *sample) *colour { return &o.Colour }, Choice[colour]("red", "blue")),
	Var("sizes", "what each wants", "3,2", func(o *sample) *[]int { return &o.Sizes }, IntList(1, 9)),
	Var("leader", "who leads first", "", func(o *sample) *string { return &o.Leader }, Text("a node name, or empty")),
}, Embed(innerOptions, func(o *sample) *inner { return &o.inner })...)}

func TestTableDefaultsComeFromTheDeclarations(t *testing.T) {
	require.NoError(t, sampleTable.Check())
	d := sampleTable.Defaults()
	assert.Equal(t, sample{inner: inner{Hold: 100 * time.Millisecond}, TTL: 10 * time.Second, Count: 3, Big: 4,
		Drift: 0.01, Colour: "red", Sizes: []int{3, 2}}, d)
	assert.Equal(t, []string{"ttl", "fenced", "count", "big", "drift", "colour", "sizes", "leader", "hold"}, sampleTable.Names())
	docs := sampleTable.Docs()
	assert.Equal(t, Doc{Name: "colour", Doc: "which colour", Default: "red", Accepts: "red or blue"}, docs[5])
	assert.Equal(t, "a duration >= 0", docs[8].Accepts)
	for i, s := range sampleTable.Values(d) {
		assert.Equal(t, sampleTable.Options[i].Default, s.Value, s.Name)
	}
}

func TestTableSet(t *testing.T) {
	o := sampleTable.Defaults()
	for _, kv := range [][2]string{{"ttl", "2s"}, {"fenced", "1"}, {"count", "5"}, {"big", "77"}, {"drift", "0.5"},
		{"colour", "blue"}, {"sizes", "1, 9"}, {"leader", "n2"}, {"hold", "0s"}} {
		require.NoError(t, sampleTable.Set(&o, kv[0], kv[1]), kv[0])
	}
	assert.Equal(t, sample{TTL: 2 * time.Second, Fenced: true, Count: 5, Big: 77, Drift: 0.5, Colour: "blue",
		Sizes: []int{1, 9}, Leader: "n2"}, o)

	tests := []struct{ key, value, want string }{
		{"ttl", "0s", `sample option ttl="0s": must be positive`},
		{"ttl", "long", `sample option ttl="long": not a duration (write it like 250ms, 10s or 1m30s)`},
		{"hold", "-1s", `sample option hold="-1s": must not be negative`},
		{"fenced", "yes", `sample option fenced="yes": want true or false`},
		{"count", "4", `sample option count="4": want 3 or 5`},
		{"count", "x", `sample option count="x": want 3 or 5`},
		{"big", "x", `sample option big="x": not an integer`},
		{"big", "-1", `sample option big="-1": must be in 0..1000000`},
		{"drift", "2", `sample option drift="2": must be in 0..1`},
		{"colour", "green", `sample option colour="green": want one of red, blue`},
		{"sizes", "1,0", `sample option sizes="1,0": "0": must be in 1..9`},
		{"shade", "x", `sample has no option "shade" (options: ttl, fenced, count, big, drift, colour, sizes, leader, hold)`},
		{"color", "red", `sample has no option "color" — did you mean "colour"? (options: ttl, fenced, count, big, drift, colour, sizes, leader, hold)`},
		{"Leader", "n1", `sample has no option "Leader" — did you mean "leader"? (options: ttl, fenced, count, big, drift, colour, sizes, leader, hold)`},
	}
	for _, tc := range tests {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			o := sampleTable.Defaults()
			assert.EqualError(t, sampleTable.Set(&o, tc.key, tc.value), tc.want)
			assert.Equal(t, sampleTable.Defaults(), o, "a rejected value changes nothing")
		})
	}
	empty := Table[struct{}]{Owner: "control"}
	assert.EqualError(t, empty.Set(&struct{}{}, "ttl", "1s"), `control has no option "ttl" (it has no options)`)
}

func TestTableParseAndEffective(t *testing.T) {
	o, err := sampleTable.Parse(map[string]string{"ttl": "3s", "count": "5"})
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, o.TTL)
	assert.Equal(t, 5, o.Count)
	_, err = sampleTable.Parse(map[string]string{"zz": "1", "big": "x", "count": "4"})
	assert.ErrorContains(t, err, "big", "keys are set in sorted order: the first error is always the same")
	eff, err := sampleTable.Effective(map[string]string{"ttl": "3000ms"})
	require.NoError(t, err)
	assert.Equal(t, Setting{Name: "ttl", Value: "3s"}, eff[0], "values are printed canonically")
	assert.Equal(t, Setting{Name: "hold", Value: "100ms"}, eff[8], "defaults included")
	var spec Spec = sampleTable
	assert.Len(t, spec.Docs(), 9)
}

func TestTableCheckFindsContradictions(t *testing.T) {
	field := func(o *sample) *time.Duration { return &o.TTL }
	bad := Table[sample]{Owner: "bad", Options: []Option[sample]{
		Var("ttl", "the lease", "0s", field, Positive),
		Var("ttl", "again", "1s", field, Positive),
		Var("hold", "", "1s", field, Positive),
		Var("wait", "a wait", "1000ms", field, Positive),
		Var("", "no name", "1s", field, Positive),
	}}
	err := bad.Check()
	require.Error(t, err)
	for _, want := range []string{`bad option ttl: default "0s": must be positive`, "bad option ttl is declared twice",
		"bad option hold says neither", `bad option wait: default "1000ms" reads back as "1s"`, "bad option #4 has no name"} {
		assert.ErrorContains(t, err, want)
	}
	assert.Panics(t, func() { bad.Defaults() })
}

// BenchmarkTableParse is the cost a run pays to build its options from a
// table: the defaults parsed from their text, then the given pairs set.
func BenchmarkTableParse(b *testing.B) {
	kv := map[string]string{"ttl": "3s", "colour": "blue"}
	for b.Loop() {
		if _, err := sampleTable.Parse(kv); err != nil {
			b.Fatal(err)
		}
	}
}
