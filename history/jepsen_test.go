package history

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readJepsen reads a Jepsen history given as text.
func readJepsen(t *testing.T, text string) Jepsen {
	t.Helper()
	h, err := ReadJepsen(strings.NewReader(text), "history.edn")
	require.NoError(t, err)
	return h
}

func TestReadJepsenMapsALockTestsOperations(t *testing.T) {
	h := readJepsen(t, `{:type :invoke, :f :acquire, :value nil, :time 10, :process 0, :index 0}
{:type :ok, :f :acquire, :value nil, :time 20, :process 0, :index 1}
{:type :invoke, :f :release, :value nil, :time 30, :process 0, :index 2}
{:type :ok, :f :release, :value nil, :time 40, :process 0, :index 3}
{:type :invoke, :f :lock, :value nil, :time 50, :process 1, :index 4}
{:type :fail, :f :lock, :value nil, :time 60, :process 1, :index 5, :error [:already-held "by p0"]}
`)
	want := []Event{
		{Index: 0, Time: 10, Process: 0, Node: "p0", Type: Invoke, F: FAcquire, Key: JepsenKey, Owner: "p0#1"},
		{Index: 1, Time: 20, Process: 0, Node: "p0", Type: OK, F: FAcquire, Key: JepsenKey, Owner: "p0#1"},
		{Index: 2, Time: 30, Process: 0, Node: "p0", Type: Invoke, F: FRelease, Key: JepsenKey, Owner: "p0#1"},
		{Index: 3, Time: 40, Process: 0, Node: "p0", Type: OK, F: FRelease, Key: JepsenKey, Owner: "p0#1"},
		{Index: 4, Time: 50, Process: 1, Node: "p1", Type: Invoke, F: FAcquire, Key: JepsenKey, Owner: "p1#1"},
		{Index: 5, Time: 60, Process: 1, Node: "p1", Type: Fail, F: FAcquire, Key: JepsenKey, Owner: "p1#1", Detail: `error [:already-held "by p0"]`},
	}
	assert.Equal(t, want, h.Events)
	assert.Equal(t, 6, h.Ops)
	assert.Empty(t, h.Left)
}

// Each field of a Jepsen operation, alone, and what it becomes.
func TestReadJepsenMapsEachField(t *testing.T) {
	const inv = `{:type :invoke, :f :acquire, :time 0, :process 3`
	tests := []struct {
		name        string
		invoke, ok  string // the fields added to the invocation and its completion
		check       func(t *testing.T, inv, ok Event)
		left        []JepsenLeft
		description string
	}{
		{name: "owner on the completion only", ok: `:owner "app-1"`, check: func(t *testing.T, inv, ok Event) {
			assert.Equal(t, "", inv.Owner, "the reader takes it from the completion")
			assert.Equal(t, "app-1", ok.Owner)
		}},
		{name: "owner as a keyword", invoke: `:owner :app-1`, check: func(t *testing.T, inv, ok Event) {
			assert.Equal(t, "app-1", inv.Owner)
			assert.Equal(t, "app-1", ok.Owner)
		}},
		{name: "token", ok: `:token 42`, check: func(t *testing.T, _, ok Event) {
			require.NotNil(t, ok.Token)
			assert.Equal(t, uint64(42), *ok.Token)
		}},
		{name: "fencing-token", ok: `:fencing-token 42`, check: func(t *testing.T, _, ok Event) {
			require.NotNil(t, ok.Token)
			assert.Equal(t, uint64(42), *ok.Token)
		}},
		{name: "ttl in nanoseconds on the invocation: the deadline counts from the call", invoke: `:ttl 2000000000`, check: func(t *testing.T, inv, ok Event) {
			assert.Nil(t, inv.Deadline)
			require.NotNil(t, ok.Deadline)
			assert.Equal(t, int64(2_000_000_000), *ok.Deadline)
		}},
		{name: "lease as a duration on the completion", ok: `:lease "1.5s"`, check: func(t *testing.T, _, ok Event) {
			require.NotNil(t, ok.Deadline)
			assert.Equal(t, int64(1_500_000_000), *ok.Deadline)
		}},
		{name: "jepsen.independent tuple names the key", invoke: `:value [7 nil]`, ok: `:value [7 nil]`, check: func(t *testing.T, inv, ok Event) {
			assert.Equal(t, "7", inv.Key)
			assert.Equal(t, "7", ok.Key)
		}},
		{name: "a key named on the completion only is the operation's", ok: `:key :orders`, check: func(t *testing.T, inv, ok Event) {
			assert.Equal(t, "orders", inv.Key)
			assert.Equal(t, "orders", ok.Key)
		}},
		{name: "a value is kept in the detail, not interpreted", ok: `:value 17`, check: func(t *testing.T, _, ok Event) {
			assert.Nil(t, ok.Token)
			assert.Equal(t, "value 17", ok.Detail)
		}},
		{name: "fields the mapping does not read are listed", invoke: `:debug {:a 1}`, ok: `:debug {:a 2}, :node "n1"`,
			left: []JepsenLeft{{"field :debug", 2}, {"field :node", 1}}, check: func(t *testing.T, _, ok Event) {}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := readJepsen(t, inv+" "+tc.invoke+"}\n"+`{:type :ok, :f :acquire, :time 5, :process 3 `+tc.ok+"}\n")
			require.Len(t, h.Events, 2)
			tc.check(t, h.Events[0], h.Events[1])
			assert.Equal(t, tc.left, h.Left)
		})
	}
}

// A release names no owner in Jepsen's lock tests: it releases what its
// process holds. Without :owner every acquire is an acquisition of its own,
// so a second grant to a process that holds the lock is a grant to another
// acquirer (Jepsen's mutex is not reentrant).
func TestReadJepsenGivesReleasesTheOwnerTheirProcessHolds(t *testing.T) {
	h := readJepsen(t, `{:type :invoke, :f :acquire, :time 0, :process 0}
{:type :ok, :f :acquire, :time 1, :process 0}
{:type :invoke, :f :acquire, :time 2, :process 0}
{:type :fail, :f :acquire, :time 3, :process 0, :error :already-held}
{:type :invoke, :f :release, :time 4, :process 0}
{:type :ok, :f :release, :time 5, :process 0}
{:type :invoke, :f :release, :time 6, :process 0}
{:type :fail, :f :release, :time 7, :process 0, :error :not-held}
`)
	var owners []string
	for _, e := range h.Events {
		owners = append(owners, e.Owner)
	}
	assert.Equal(t, []string{"p0#1", "p0#1", "p0#2", "p0#2", "p0#1", "p0#1", "", ""}, owners)
}

func TestReadJepsenLeavesOutOtherOperationsAndSaysSo(t *testing.T) {
	h := readJepsen(t, `{:type :invoke, :f :add, :value 1, :time 0, :process 0}
{:type :ok, :f :add, :value 1, :time 1, :process 0}
{:type :invoke, :f :read, :time 2, :process 1}
{:type :info, :f :read, :time 3, :process 1}
{:type :invoke, :f :acquire, :time 4, :process 0}
{:type :ok, :f :acquire, :time 5, :process 0}
{:type :info, :f :check-clock-offsets, :time 6, :process :nemesis}
{:type :info, :f :check-clock-offsets, :value {"n1" 0.01}, :time 7, :process :nemesis}
`)
	assert.Len(t, h.Events, 2)
	assert.Equal(t, 8, h.Ops)
	assert.Equal(t, []JepsenLeft{{"nemesis :f :check-clock-offsets", 1}, {"op :f :add", 1}, {"op :f :read", 1}}, h.Left)
	assert.Equal(t, "1 × op :f :add", h.Left[1].String())
}

// fault is a fault window as the tests below compare them.
type fault struct {
	Kind        string
	Start, Stop int64 // Stop -1: still under way at the end
	Targets     []string
	Detail      string
}

func faultsOf(events []Event) []fault {
	var out []fault
	for _, w := range FaultWindows(events) {
		f := fault{Kind: w.Start.F, Start: w.Start.Time, Stop: -1, Targets: w.Start.Targets, Detail: w.Start.Detail}
		if w.Stop != nil {
			f.Stop = w.Stop.Time
		}
		out = append(out, f)
	}
	return out
}

// nemesis is a nemesis operation at time t, as Jepsen records it.
func nemesis(t int, f, value string) string {
	if value != "" {
		value = ", :value " + value
	}
	return "{:type :info, :process :nemesis, :time " + strconv.Itoa(t) + ", :f :" + f + value + "}\n"
}

// Jepsen's nemesis records each operation as it begins and as it ends; a
// fault lasts from the beginning of the operation that starts it to the end
// of the one that stops it.
func TestReadJepsenTurnsNemesisOperationsIntoFaults(t *testing.T) {
	tests := []struct {
		name    string
		history string
		want    []fault
		left    []JepsenLeft
	}{
		{"a partition, started and stopped",
			nemesis(10, "start-partition", ":majority") + nemesis(12, "start-partition", `[:isolated {"n1" #{"n2"}}]`) +
				nemesis(50, "stop-partition", "") + nemesis(53, "stop-partition", ":network-healed"),
			[]fault{{"partition", 10, 53, nil, `:start-partition :majority -> [:isolated {"n1" #{"n2"}}]`}}, nil},
		{"the classic nemesis's :start and :stop, a grudge naming the nodes",
			nemesis(10, "start", "") + nemesis(11, "start", `{"n1" #{"n2" "n3"}, "n2" #{"n1"}}`) + nemesis(20, "stop", "") + nemesis(21, "stop", `"fully connected"`),
			[]fault{{"nemesis", 10, 21, []string{"n1", "n2"}, `:start -> {"n1" #{"n2" "n3"} "n2" #{"n1"}}`}}, nil},
		{":kill, then :start restarts the killed nodes",
			nemesis(10, "kill", ":primaries") + nemesis(11, "kill", `["n1" "n3"]`) + nemesis(20, "start", ":all") + nemesis(25, "start", `{"n1" :started, "n3" :started}`),
			[]fault{{"crash", 10, 25, []string{"n1", "n3"}, `:kill :primaries -> ["n1" "n3"]`}}, nil},
		{":pause and :resume",
			nemesis(10, "pause", `["n2"]`) + nemesis(11, "pause", `["n2"]`) + nemesis(20, "resume", `["n2"]`) + nemesis(21, "resume", `["n2"]`),
			[]fault{{"pause", 10, 21, []string{"n2"}, `:pause ["n2"]`}}, nil},
		{"a clock bump until the reset",
			nemesis(10, "bump-clock", `{"n1" 200}`) + nemesis(11, "bump-clock", `{"n1" 200}`) + nemesis(20, "reset-clock", "") + nemesis(21, "reset-clock", ""),
			[]fault{{"clock-jump", 10, 21, []string{"n1"}, `:bump-clock {"n1" 200}`}}, nil},
		{"an operation nothing stops is a fault while it runs",
			nemesis(10, "strobe-clock", "") + nemesis(30, "strobe-clock", `"strobed"`) + nemesis(40, "truncate-file", `"n1"`) + nemesis(42, "truncate-file", `"n1"`),
			[]fault{{"clock-strobe", 10, 30, nil, `:strobe-clock -> "strobed"`}, {"truncate-file", 40, 42, nil, `:truncate-file "n1"`}}, nil},
		{"one operation each, as a hand-written history may give them",
			nemesis(10, "start-partition", "") + nemesis(20, "start-pause", "") + nemesis(30, "stop-partition", "") + nemesis(40, "stop-pause", ""),
			[]fault{{"partition", 10, 30, nil, ":start-partition"}, {"pause", 20, 40, nil, ":start-pause"}}, nil},
		{"a stop with nothing under way, as at the end of a test",
			nemesis(10, "stop", "") + nemesis(11, "stop", ":healed"),
			nil, []JepsenLeft{{"nemesis :f :stop with no nemesis fault under way", 1}}},
		{"a fault under way at the end",
			nemesis(10, "start", "") + nemesis(11, "start", ":cut"),
			[]fault{{"nemesis", 10, -1, nil, ":start -> :cut"}}, nil},
		{"a failed operation did nothing",
			"{:type :invoke, :process :nemesis, :time 10, :f :start-partition}\n{:type :fail, :process :nemesis, :time 11, :f :start-partition}\n",
			nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := readJepsen(t, tc.history)
			assert.Equal(t, tc.want, faultsOf(h.Events))
			assert.Equal(t, tc.left, h.Left)
			for _, e := range h.Events {
				assert.Equal(t, NemesisProcess, e.Process)
			}
		})
	}
}

// A history.edn is one map per line; a history may also be one vector or
// list of maps, pretty-printed, with comments, or print its operations as
// jepsen.history.Op records: all read the same.
func TestReadJepsenAcceptsEveryLayout(t *testing.T) {
	const a = `{:type :invoke, :f :acquire, :value nil, :time 1, :process 0, :index 0}`
	const b = `{:type :ok, :f :acquire, :value nil, :time 2, :process 0, :index 1}`
	want := readJepsen(t, a+"\n"+b+"\n").Events
	for name, text := range map[string]string{
		"vector":                 "[" + a + "\n " + b + "]\n",
		"list":                   "(" + a + " " + b + ")",
		"no newline at the end":  a + "\n" + b,
		"records":                "#jepsen.history.Op" + a + "\n#jepsen.history.Op " + b,
		"comments and discards":  "; a lock test\n" + a + " ; first\n#_ {:type :ok}\n" + b + "\n",
		"one map over lines":     "{:type :invoke,\n :f :acquire,\n :value nil,\n :time 1, :process 0, :index 0}\n" + b,
		"without commas":         strings.ReplaceAll(a+"\n"+b, ",", ""),
		"sparse indexes":         a + "\n" + strings.Replace(b, ":index 1", ":index 7", 1),
		"with no indexes":        strings.Replace(a, ", :index 0", "", 1) + "\n" + strings.Replace(b, ", :index 1", "", 1),
		"CRLF line ends":         a + "\r\n" + b + "\r\n",
		"strings for type and f": strings.Replace(a, ":type :invoke, :f :acquire", `:type "invoke", :f "acquire"`, 1) + "\n" + b,
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, want, readJepsen(t, text).Events)
		})
	}
	assert.Empty(t, readJepsen(t, "").Events, "an empty history")
	assert.Empty(t, readJepsen(t, "[]").Events, "an empty vector")
}

// Clojure prints some values that are not EDN: a Java object
// (#object[... 0x1f ...]), ##Inf, a regular expression, a ratio. A real
// history may hold them in a value the mapping only shows or in a field it
// does not read: they are kept as written and counted, not refused.
func TestReadJepsenKeepsValuesClojurePrintsAsWritten(t *testing.T) {
	h := readJepsen(t, `{:type :invoke, :f :acquire, :time 1, :process 0, :value nil}
{:type :info, :f :acquire, :time 2, :process 0, :error #object[io.etcd.jetcd.Lock 0x6d1e7682 "io.etcd.jetcd.Lock@6d1e7682"], :exception {:via [{:type java.net.SocketTimeoutException, :message "Read timed out", :at [java.net.SocketInputStream socketRead0 "SocketInputStream.java" -2], :data {:client #object[jepsen.etcd.Client 0x1f "c"]}}], :cause "Read timed out"}}
{:type :invoke, :f :acquire, :time 3, :process 1, :value ##Inf}
{:type :fail, :f :acquire, :time 4, :process 1, :value 1/2, :error #"held by .*"}
{:type :info, :f :start, :time 5, :process :nemesis, :value ##NaN}
`)
	require.Len(t, h.Events, 5) // the nemesis's :start is still under way at the end
	assert.Equal(t, `error #object[io.etcd.jetcd.Lock 0x6d1e7682 "io.etcd.jetcd.Lock@6d1e7682"]`, h.Events[1].Detail)
	assert.Equal(t, "value ##Inf", h.Events[2].Detail)
	assert.Equal(t, `value 1/2; error #"held by .*"`, h.Events[3].Detail)
	assert.Equal(t, ":start ##NaN", h.Events[4].Detail)
	assert.Equal(t, []JepsenLeft{
		{"a value that is not EDN, kept as written (:error)", 2},
		{"a value that is not EDN, kept as written (:exception)", 1},
		{"a value that is not EDN, kept as written (:value)", 3},
		{"field :exception", 1},
	}, h.Left)
}

// Jepsen reads a worker's clock before it appends the operation to the
// history, so across processes a :time may step back behind the one on the
// line before it. The history's order is the order in time: such an
// operation is read at the latest time before it, the steps are counted,
// and a lease counts from the :time as written.
func TestReadJepsenKeepsTheHistoryOrderWhenTimesStepBack(t *testing.T) {
	tests := []struct {
		name    string
		history string
		times   []int64
		steps   JepsenSteps
	}{
		{"in order", `{:type :invoke, :f :acquire, :time 10, :process 0}
{:type :ok, :f :acquire, :time 20, :process 0}
`, []int64{10, 20}, JepsenSteps{}},
		{"equal times are not steps", `{:type :invoke, :f :acquire, :time 10, :process 0}
{:type :invoke, :f :acquire, :time 10, :process 1}
`, []int64{10, 10}, JepsenSteps{}},
		{"an invocation behind another process's completion", `{:type :invoke, :f :acquire, :time 1000, :process 0}
{:type :ok, :f :acquire, :time 5000, :process 0}
{:type :invoke, :f :acquire, :time 4000, :process 1}
{:type :fail, :f :acquire, :time 6000, :process 1, :error :already-held}
`, []int64{1000, 5000, 5000, 6000}, JepsenSteps{Count: 1, Max: 1000, Line: 3, Behind: 2}},
		{"several, the largest named", `{:type :invoke, :f :acquire, :time 1000, :process 0}
{:type :invoke, :f :release, :time 990, :process 1}
{:type :fail, :f :release, :time 1200, :process 1, :error :not-held}
{:type :invoke, :f :release, :time 1100, :process 2}
{:type :ok, :f :acquire, :time 1150, :process 0}
{:type :fail, :f :release, :time 1300, :process 2, :error :not-held}
`, []int64{1000, 1000, 1200, 1200, 1200, 1300}, JepsenSteps{Count: 3, Max: 100, Line: 4, Behind: 3}},
		{"the nemesis steps back too", `{:type :invoke, :f :acquire, :time 1000, :process 0}
{:type :info, :f :start, :time 900, :process :nemesis}
{:type :ok, :f :acquire, :time 1100, :process 0}
{:type :info, :f :start, :time 1050, :process :nemesis}
`, []int64{1000, 1000, 1100}, JepsenSteps{Count: 2, Max: 100, Line: 2, Behind: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := readJepsen(t, tc.history)
			var times []int64
			for _, e := range h.Events {
				times = append(times, e.Time)
			}
			assert.Equal(t, tc.times, times)
			assert.Equal(t, tc.steps, h.Steps)
			require.NoError(t, Validate(h.Events))
		})
	}
}

func TestReadJepsenCountsALeaseFromTheTimeAsWritten(t *testing.T) {
	h := readJepsen(t, `{:type :invoke, :f :acquire, :time 5000000, :process 0}
{:type :invoke, :f :acquire, :time 4000000, :process 1, :ttl "2s"}
{:type :ok, :f :acquire, :time 6000000, :process 1}
`)
	require.Len(t, h.Events, 3)
	assert.Equal(t, int64(5_000_000), h.Events[1].Time, "read in the history's order")
	require.NotNil(t, h.Events[2].Deadline)
	assert.Equal(t, int64(2_004_000_000), *h.Events[2].Deadline, "the lease counts from the clock's reading")
}

func TestJepsenStepsSaysHowFarAndWhatWasDone(t *testing.T) {
	assert.Equal(t, "times: in the history's order throughout", JepsenSteps{}.String())
	assert.Equal(t, "times: 1 operation carries a :time earlier than the latest before it, by at most 1.1ms (line 10, behind line 9): "+
		"Jepsen reads a worker's clock before it appends the operation, so the history's order was kept as the order in time "+
		"and each was taken at the latest time before it", JepsenSteps{Count: 1, Max: 1_142_366, Line: 10, Behind: 9}.String())
	assert.Contains(t, JepsenSteps{Count: 6, Max: 1000, Line: 3, Behind: 2}.String(), "times: 6 operations carry a :time earlier than the latest before them, by at most 1µs")
}

// A Jepsen test writes its history to store/<test>/<time>/history.edn;
// the directory (or store/latest) names it.
func TestReadJepsenFileReadsAStoreDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store", "etcd-lock", "20261207T185000.000Z")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	file := filepath.Join(dir, JepsenHistoryFile)
	require.NoError(t, os.WriteFile(file, []byte("{:type :invoke, :f :acquire, :time 1, :process 0}\n{:type :ok, :f :acquire, :time 0, :process 0}\n"), 0o644))
	assert.Equal(t, file, JepsenPath(dir))
	assert.Equal(t, file, JepsenPath(file))
	_, err := ReadJepsenFile(dir)
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, file, pe.File, "the error names the file read")

	require.NoError(t, os.WriteFile(file, []byte("{:type :invoke, :f :acquire, :time 1, :process 0}\n"), 0o644))
	h, err := ReadJepsenFile(dir)
	require.NoError(t, err)
	assert.Len(t, h.Events, 1)

	empty := t.TempDir()
	assert.Equal(t, empty, JepsenPath(empty))
	_, err = ReadJepsenFile(empty)
	assert.ErrorIs(t, err, ErrIsDirectory)
}

func TestReadJepsenRefusesMalformedInputWithLineAndField(t *testing.T) {
	const inv = "{:type :invoke, :f :acquire, :time 5, :process 0}\n"
	tests := []struct {
		name, input string
		line        int
		reason      string
	}{
		{"missing time", "{:type :invoke, :f :acquire, :process 0}", 1, "missing field :time"},
		{"time null", "{:type :invoke, :f :acquire, :process 0, :time nil}", 1, "missing field :time"},
		{"time as text", `{:type :invoke, :f :acquire, :process 0, :time "soon"}`, 1, `field :time "soon": want the nanoseconds`},
		{"negative time", "{:type :invoke, :f :acquire, :process 0, :time -1}", 1, "field :time -1"},
		{"time goes back", inv + "{:type :ok, :f :acquire, :time 4, :process 0}", 2, "field :time 4 is earlier than the 5 of line 1, of the same process 0: a process's times never go back"},
		{"time goes back in one process, others between", inv + "{:type :invoke, :f :acquire, :time 9, :process 1}\n{:type :ok, :f :acquire, :time 3, :process 0}", 3, "field :time 3 is earlier than the 5 of line 1, of the same process 0"},
		{"the nemesis's time goes back", "{:type :info, :f :start, :time 9, :process :nemesis}\n{:type :info, :f :start, :time 8, :process :nemesis}", 2, "field :time 8 is earlier than the 9 of line 1, of the same process :nemesis"},
		{"index goes back", "{:type :invoke, :f :acquire, :time 5, :process 0, :index 3}\n{:type :ok, :f :acquire, :time 6, :process 0, :index 3}", 2, "field :index 3 does not follow the 3 of line 1"},
		{"unknown type", "{:type :maybe, :f :acquire, :time 5, :process 0}", 1, "field :type :maybe: want :invoke, :ok, :fail or :info"},
		{"type a number", "{:type 1, :f :acquire, :time 5, :process 0}", 1, "field :type is an integer: want a keyword"},
		{"process a keyword", "{:type :invoke, :f :acquire, :time 5, :process :client}", 1, "field :process :client: want a client's number"},
		{"negative process", "{:type :invoke, :f :acquire, :time 5, :process -2}", 1, "field :process -2"},
		{"f a vector", "{:type :invoke, :f [:acquire], :time 5, :process 0}", 1, "field :f is a list or vector"},
		{"field twice", "{:type :invoke, :f :acquire, :time 5, :time 6, :process 0}", 1, "field :time appears twice"},
		{"key not a keyword", `{"type" :invoke, :f :acquire, :time 5, :process 0}`, 1, `key "type" is a string: the fields of a Jepsen operation are keywords`},
		{"key without a value", "{:type :invoke, :f :acquire, :time 5, :process}", 1, "the map's last key :process has no value"},
		{"not a map", inv + ":acquire", 2, "a keyword: want an operation map"},
		{"vector among maps", inv + "[1 2]", 2, "a vector: want an operation map"},
		{"another record", "#foo.Bar{:type :invoke}", 1, "a value tagged #foo.Bar"},
		{"unclosed map", inv + "{:type :ok, :f :acquire,\n :time 6", 2, "the map opened on line 2 is not closed"},
		{"unclosed string", `{:type :invoke, :f :acquire, :time 5, :process 0, :error "oops}`, 1, "the string opened on line 1 is not closed"},
		{"stray closer", inv + "}", 2, `'}' closes nothing`},
		{"mismatched closer", "{:type :invoke, :f :acquire, :time 5, :process 0]", 1, `']' closes the map opened on line 1 with '{'`},
		{"bad string escape", `{:type :invoke, :f :acquire, :time 5, :process 0, :error "\x"}`, 1, "field :error: not valid EDN"},
		{"bad string escape deep in a value", `{:type :invoke, :f :acquire, :time 5, :process 0, :exception {:via [#object[Foo 0x1 "\x"]]}}`, 1, "field :exception: not valid EDN"},
		{"a Clojure value where a number must be", "{:type :invoke, :f :acquire, :time ##Inf, :process 0}", 1, "field :time: not valid EDN"},
		{"a Java object for a key", "{:type :invoke, :f :acquire, :time 5, :process 0, :key #object[Foo 0x1 \"k\"]}", 1, "field :key: not valid EDN"},
		{"number out of range", "{:type :invoke, :f :acquire, :time 99999999999999999999, :process 0}", 1, "field :time: not valid EDN: a number out of range"},
		{"invalid UTF-8", inv + "{:type :ok, :f :acquire, :time 6, :process 0, :error \"\xff\"}", 2, "not valid UTF-8"},
		{"nested too deep", "{:value " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}", 1, "nested more than 64 deep"},
		{"invoke while open", inv + "{:type :invoke, :f :release, :time 6, :process 0}", 2, "process 0 invokes :release while its :acquire of line 1 is still open"},
		{"completion without invoke", "{:type :ok, :f :acquire, :time 5, :process 0}", 1, ":ok :acquire of process 0 without a preceding :invoke"},
		{"completion of another f", inv + "{:type :ok, :f :release, :time 6, :process 0}", 2, ":ok :release of process 0 does not complete its :invoke :acquire of line 1"},
		{"process continues after info", inv + "{:type :info, :f :acquire, :time 6, :process 0}\n{:type :invoke, :f :acquire, :time 7, :process 0}", 3, "process 0 continues after its :info on line 2"},
		{"completion names another key", "{:type :invoke, :f :acquire, :time 5, :process 0, :key :a}\n{:type :ok, :f :acquire, :time 6, :process 0, :key :b}", 2, `the completion names key "b", its :invoke on line 1 key "a"`},
		{"completion names another owner", "{:type :invoke, :f :acquire, :time 5, :process 0, :owner :a}\n{:type :ok, :f :acquire, :time 6, :process 0, :owner :b}", 2, `field :owner "b" differs from the owner "a" of its :invoke on line 1`},
		{"key and tuple disagree", "{:type :invoke, :f :acquire, :time 5, :process 0, :key :a, :value [:b nil]}", 1, `field :key "a" differs from the key "b"`},
		{"token and fencing-token", inv + "{:type :ok, :f :acquire, :time 6, :process 0, :token 1, :fencing-token 1}", 2, "field :fencing-token and :token both give the token"},
		{"negative token", inv + "{:type :ok, :f :acquire, :time 6, :process 0, :token -1}", 2, "field :token -1: want a whole number"},
		{"ttl in seconds", "{:type :invoke, :f :acquire, :time 5, :process 0, :ttl 2}", 1, `field :ttl 2: a lease of 2ns? :ttl is in nanoseconds, as :time is: write 2000000000 or "2s" for 2 seconds`},
		{"ttl not a duration", "{:type :invoke, :f :acquire, :time 5, :process 0, :lease \"long\"}", 1, `field :lease "long": want a positive duration`},
		{"ttl and lease", "{:type :invoke, :f :acquire, :time 5, :process 0, :ttl \"1s\", :lease \"1s\"}", 1, "field :lease and :ttl both give the lease"},
		{"ttl past the end of time", "{:type :invoke, :f :acquire, :time 9223372036854775000, :process 0, :ttl \"1s\"}\n{:type :ok, :f :acquire, :time 9223372036854775001, :process 0}", 2, "the lease would end after the end of time"},
		{"owner too long", "{:type :invoke, :f :acquire, :time 5, :process 0, :owner \"" + strings.Repeat("o", 201) + "\"}", 1, "field :owner is longer than 200 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadJepsen(strings.NewReader(tc.input), "h.edn")
			require.Error(t, err)
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "want a ParseError, got %v", err)
			assert.Equal(t, "h.edn", pe.File)
			assert.Equal(t, tc.line, pe.Line, pe.Reason)
			assert.Contains(t, pe.Reason, tc.reason)
		})
	}
}

func TestReadJepsenFileNamesTheDirectory(t *testing.T) {
	_, err := ReadJepsenFile(t.TempDir())
	assert.ErrorIs(t, err, ErrIsDirectory)
}

func FuzzReadJepsen(f *testing.F) {
	f.Add([]byte("{:type :invoke, :f :acquire, :value nil, :time 10, :process 0, :index 0}\n{:type :ok, :f :acquire, :value nil, :time 20, :process 0, :index 1}\n"))
	f.Add([]byte("[{:type :invoke, :f :lock, :time 1, :process 0, :ttl \"2s\"}\n {:type :ok, :f :lock, :time 2, :process 0, :token 3, :owner \"a\"}]"))
	f.Add([]byte(nemesis(1, "kill", ":one") + nemesis(2, "kill", `["n1"]`) + nemesis(3, "start", "") + nemesis(4, "start-partition", `{"n1" #{"n2"}}`)))
	f.Add([]byte("{:type :invoke, :f :acquire, :time 50, :process 0}\n{:type :invoke, :f :release, :time 40, :process 1}\n{:type :fail, :f :release, :time 60, :process 1, :error :not-held}\n{:type :ok, :f :acquire, :time 55, :process 0}\n"))
	f.Add([]byte("{:type :invoke, :f :acquire, :time 1, :process 0, :value ##Inf, :exception {:via [#object[Foo 0x1f \"x\"]]}, :error #\"re\"}\n"))
	f.Add([]byte("#jepsen.history.Op{:type :invoke, :f :release, :time 0, :process 4, :value [3 nil]} ; c\n#_ x {:type :info :f :release :time 1 :process 4 :error \"t\\\"o\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadJepsen(bytes.NewReader(data), "fuzz")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a ParseError: %v", err)
			}
			return
		}
		// Whatever was read is a valid history, and the locklab format
		// holds it: check --out writes it.
		if err := Validate(h.Events); err != nil {
			t.Fatalf("read an invalid history: %v", err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, h.Events); err != nil {
			t.Fatalf("read a history Write cannot write: %v", err)
		}
		back, err := Read(&buf, "again")
		if err != nil {
			t.Fatalf("the history written does not read back: %v", err)
		}
		if len(back) != len(h.Events) || (len(back) > 0 && !reflect.DeepEqual(back, h.Events)) {
			t.Fatalf("the round trip changed the history:\n%v\n%v", h.Events, back)
		}
		if (h.Steps.Count > 0) != (h.Steps.Max > 0) || (h.Steps.Count > 0 && h.Steps.Line < h.Steps.Behind) {
			t.Fatalf("an account of the time steps that does not add up: %+v", h.Steps)
		}
		for _, l := range h.Left {
			if l.Count <= 0 || l.What == "" {
				t.Fatalf("an empty account of what was left out: %+v", h.Left)
			}
		}
	})
}
