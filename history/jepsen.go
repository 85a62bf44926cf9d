package history

import (
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"olympos.io/encoding/edn"
)

// JepsenKey is the lock key of a Jepsen operation that names none (Jepsen's
// lock tests test one lock).
const JepsenKey = "lock"

// Jepsen is a Jepsen history read as locklab events (see the package
// documentation, "Jepsen histories", for the mapping), with what the reading
// left out.
type Jepsen struct {
	Events []Event
	// Ops counts the Jepsen operations read, the client's and the nemesis's.
	Ops int
	// Left is what the mapping did not use, each with its count, sorted: a
	// reader of the verdicts should know what they were not told.
	Left []JepsenLeft
	// Steps is where the :time of an operation stepped back behind an
	// earlier operation's, and how far.
	Steps JepsenSteps
}

// JepsenSteps is how far a Jepsen history's :time stepped back across
// processes. Jepsen reads a worker's clock before the operation is appended
// to the history, so an operation may carry a time a little earlier than
// the one written before it by another process; the history's order is the
// truth (Knossos and Elle use it). The reader keeps that order as the order
// in time: an operation whose :time is earlier than the latest before it is
// given that latest time (the checks order events of equal time by their
// place in the history), and a lease counts from the :time as written.
type JepsenSteps struct {
	// Count is the operations whose :time was earlier than the latest
	// before them.
	Count int
	// Max is the largest step back, in nanoseconds: Line's :time was Max
	// earlier than Behind's, the line of the latest time before it.
	Max          int64
	Line, Behind int
}

// String is the note check prints: how far the times stepped back and how
// that was treated.
func (s JepsenSteps) String() string {
	if s.Count == 0 {
		return "times: in the history's order throughout"
	}
	return fmt.Sprintf("times: %s a :time earlier than the latest before %s, by at most %s (line %d, behind line %d): "+
		"Jepsen reads a worker's clock before it appends the operation, so the history's order was kept as the order in time "+
		"and each was taken at the latest time before it",
		Plural(s.Count, "operation carries", "operations carry"), pronoun(s.Count), FormatDuration(s.Max), s.Line, s.Behind)
}

// pronoun is "it" or "them".
func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// JepsenLeft is something a Jepsen history holds that the mapping did not
// use, such as the operations of another workload or a field it does not
// know.
type JepsenLeft struct {
	What  string
	Count int
}

// String is "3 × op :f :add".
func (l JepsenLeft) String() string { return fmt.Sprintf("%d × %s", l.Count, l.What) }

// Limits of what a Jepsen history may give locklab: every event read can be
// written back on a line of its own (see MaxLineBytes).
const (
	maxJepsenForm   = MaxLineBytes // bytes of one operation map
	maxJepsenName   = 200          // bytes of a key or an owner
	maxJepsenDetail = 200          // bytes of a value shown in a detail
	maxJepsenTarget = 64           // targets of one fault, each at most maxJepsenName bytes
)

// minJepsenTTL is the shortest lease a :ttl may give: a shorter one is a
// lease in seconds or milliseconds written as nanoseconds.
const minJepsenTTL = int64(time.Millisecond)

// JepsenHistoryFile is the file a Jepsen test writes its history to, in
// its directory of the store (store/<test>/<time>/history.edn).
const JepsenHistoryFile = "history.edn"

// JepsenPath is the history file that path names: path itself, or its
// history.edn when path is a directory of Jepsen's store that holds one
// (store/<test>/<time>, store/latest).
func JepsenPath(path string) string {
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return path
	}
	inner := filepath.Join(path, JepsenHistoryFile)
	if st, err := os.Stat(inner); err == nil && st.Mode().IsRegular() {
		return inner
	}
	return path
}

// ReadJepsenFile reads the Jepsen history in path (history.edn, or a
// directory of Jepsen's store that holds it: see JepsenPath); its errors
// name the file read.
func ReadJepsenFile(path string) (Jepsen, error) {
	path = JepsenPath(path)
	f, err := os.Open(path)
	if err != nil {
		return Jepsen{}, fmt.Errorf("read history: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return Jepsen{}, fmt.Errorf("read history: %s %w", path, ErrIsDirectory)
	}
	return ReadJepsen(f, path)
}

// ReadJepsen reads a Jepsen history from r (EDN: operation maps one after
// another, or one vector or list of them) and maps it to locklab events;
// name is used in error messages, which are *ParseError for malformed input.
func ReadJepsen(r io.Reader, name string) (Jepsen, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Jepsen{}, fmt.Errorf("read %s: %w", name, err)
	}
	jr := &jepsenReader{name: name, procs: map[int]*jepsenProc{}, procTimes: map[string]jepsenStamp{}, left: map[string]int{}, lastIndex: -1}
	if i := invalidUTF8(data); i >= 0 {
		line := 1 + strings.Count(string(data[:i]), "\n")
		return Jepsen{}, jr.fail(line, "not valid UTF-8: a history is UTF-8 text")
	}
	fr := &ednFramer{data: data, line: 1}
	forms, err := fr.all(0)
	if err != nil {
		return Jepsen{}, jr.framing(err)
	}
	if len(forms) == 1 && (forms[0].raw[0] == '[' || forms[0].raw[0] == '(') {
		if forms, err = elements(forms[0]); err != nil {
			return Jepsen{}, jr.framing(err)
		}
	}
	for _, fm := range forms {
		if err := jr.op(fm); err != nil {
			return Jepsen{}, err
		}
	}
	return jr.finish()
}

// jepsenReader maps a Jepsen history's operations to events, one at a time.
type jepsenReader struct {
	name string
	// out are the events so far with the line each came from; drop marks
	// the ones a later operation took back (a fault's end that moved to
	// the completion of the operation that ended it).
	out   []Event
	lines []int
	drop  []bool

	lastTime      int64 // the latest :time so far
	lastTimeLine  int
	procTimes     map[string]jepsenStamp // the last :time of each process ("3", "nemesis")
	steps         JepsenSteps
	lastIndex     int64
	lastIndexLine int
	procs         map[int]*jepsenProc
	nemesis       *jepsenNemesisOp
	open          []jepsenWindow // faults started and not stopped, in start order
	left          map[string]int
	ops           int
}

// jepsenStamp is a :time as written and its line.
type jepsenStamp struct {
	time int64
	line int
}

// jepsenProc is what the reader knows of one client process.
type jepsenProc struct {
	open      bool   // an invocation waits for its completion
	f         string // the Jepsen :f of the open invocation
	line      int    // its line
	time      int64  // its :time as written (a lease counts from it)
	at        int    // its event in out, or -1 when it is not a lock operation
	keyGiven  bool   // it named its key
	ownerless bool   // neither it nor (yet) its completion named an owner
	owner     string // the owner it stands for when nobody names one
	ttl       *int64 // its lease length (:ttl on the invocation)
	retired   int    // the line of the :info that ended the process, or 0
	acquires  int    // acquire invocations so far
	held      string // the owner of its last acquire that returned ok, until a release returns ok
}

// jepsenNemesisOp is the nemesis operation whose completion may come next.
type jepsenNemesisOp struct {
	f, kind string
	role    nemesisRole
	value   []byte // the invocation's :value as written (nil: none)
	targets []string
	starts  []int          // start events it added
	stops   []int          // stop events it added at its invocation
	closed  []jepsenWindow // faults it ended
}

// jepsenWindow is a fault started and not yet stopped.
type jepsenWindow struct {
	kind  string
	start int // its start event in out
}

// nemesisRole is what a nemesis operation does to the faults.
type nemesisRole int

const (
	nemesisInstant nemesisRole = iota // a fault from its invocation to its completion
	nemesisStarts                     // starts a fault that a later operation stops
	nemesisStops                      // stops the faults of its kind
	nemesisNoFault                    // observes, changes nothing
)

// nemesisFaults maps the :f of Jepsen's nemeses to the fault they start or
// stop. Any other :f starting "start-" or "stop-" starts or stops the fault
// named by the rest; any other :f is a fault for as long as its operation
// runs.
var nemesisFaults = map[string]struct {
	kind string
	role nemesisRole
}{
	"start":               {"nemesis", nemesisStarts}, // partitioners, clock scramblers...; restarts after :kill (below)
	"stop":                {"nemesis", nemesisStops},
	"start-partition":     {"partition", nemesisStarts},
	"stop-partition":      {"partition", nemesisStops},
	"heal":                {"partition", nemesisStops},
	"kill":                {"crash", nemesisStarts},
	"restart":             {"crash", nemesisStops},
	"pause":               {"pause", nemesisStarts},
	"resume":              {"pause", nemesisStops},
	"bump-clock":          {"clock-jump", nemesisStarts},
	"reset-clock":         {"clock-jump", nemesisStops},
	"strobe-clock":        {"clock-strobe", nemesisInstant},
	"check-clock-offsets": {"", nemesisNoFault},
}

// nemesisRoleOf is the fault kind and role of a nemesis :f, given the faults
// now open: :start ends the crashes of :kill when there are any (Jepsen's
// process nemesis restarts the killed nodes with :start).
func (jr *jepsenReader) nemesisRoleOf(f string) (string, nemesisRole) {
	if f == "start" && slices.ContainsFunc(jr.open, func(w jepsenWindow) bool { return w.kind == "crash" }) {
		return "crash", nemesisStops
	}
	if r, ok := nemesisFaults[f]; ok {
		return r.kind, r.role
	}
	if rest, ok := strings.CutPrefix(f, "start-"); ok && rest != "" {
		return rest, nemesisStarts
	}
	if rest, ok := strings.CutPrefix(f, "stop-"); ok && rest != "" {
		return rest, nemesisStops
	}
	return f, nemesisInstant
}

// jepsenField is one field of an operation map.
type jepsenField struct {
	v    any
	raw  []byte
	line int
}

// jepsenOp is an operation map, its fields by name (without the colon).
type jepsenOp struct {
	line   int
	fields map[string]jepsenField
}

// given reports whether the field is there and not nil.
func (o jepsenOp) given(name string) bool { f, ok := o.fields[name]; return ok && f.v != nil }

// fail is a ParseError at line.
func (jr *jepsenReader) fail(line int, format string, args ...any) error {
	return &ParseError{File: jr.name, Line: line, Reason: fmt.Sprintf(format, args...)}
}

// framing is a framing error as a ParseError at its line.
func (jr *jepsenReader) framing(err error) error {
	if fe, ok := err.(*errFramer); ok {
		return jr.fail(fe.line, "%s", fe.msg)
	}
	return err
}

// fieldErr is an error about a field, naming it and its line.
func (jr *jepsenReader) fieldErr(o jepsenOp, name, format string, args ...any) error {
	line := o.line
	if f, ok := o.fields[name]; ok {
		line = f.line
	}
	return jr.fail(line, "field :%s %s", name, fmt.Sprintf(format, args...))
}

// parseOp reads an operation map's fields.
func (jr *jepsenReader) parseOp(fm form) (jepsenOp, error) {
	if len(fm.raw) > maxJepsenForm {
		return jepsenOp{}, jr.fail(fm.line, "an operation longer than %d bytes", maxJepsenForm)
	}
	if fm.raw[0] == '#' && fm.raw[1] != '{' && fm.raw[1] != '_' {
		tag, inner := untag(fm)
		if tag != "jepsen.history.Op" {
			return jepsenOp{}, jr.fail(fm.line, "a value tagged #%s: want an operation map {:type ... :f ... :process ... :time ...}", tag)
		}
		fm = inner
	}
	if fm.raw[0] != '{' {
		what := "a " + collectionName(fm.raw)
		if !isCollection(fm.raw) {
			v, err := decodeForm(fm)
			if err != nil {
				return jepsenOp{}, jr.fail(fm.line, "%v", err)
			}
			what = ednKind(v)
		}
		return jepsenOp{}, jr.fail(fm.line, "%s: want an operation map {:type ... :f ... :process ... :time ...}", what)
	}
	els, err := elements(fm)
	if err != nil {
		return jepsenOp{}, jr.framing(err)
	}
	if len(els)%2 == 1 {
		return jepsenOp{}, jr.fail(els[len(els)-1].line, "the map's last key %s has no value", compact(els[len(els)-1].raw, maxJepsenDetail))
	}
	// The library decodes the map's forms (as a vector, which keeps two
	// equal keys apart); the framing gives each its line and text, and must
	// have found as many.
	vals, err := decodeElements(fm.raw[1 : len(fm.raw)-1])
	if err != nil {
		if vals, err = jr.decodeEach(els); err != nil {
			return jepsenOp{}, err
		}
	}
	if len(vals) != len(els) {
		return jepsenOp{}, jr.fail(fm.line, "the map's forms cannot be told apart (%d or %d of them?)", len(els), len(vals))
	}
	o := jepsenOp{line: fm.line, fields: map[string]jepsenField{}}
	for i := 0; i < len(els); i += 2 {
		k, v := els[i], els[i+1]
		key, val := vals[i], vals[i+1]
		kw, ok := key.(edn.Keyword)
		if !ok {
			return jepsenOp{}, jr.fail(k.line, "key %s is %s: the fields of a Jepsen operation are keywords (:time)", compact(k.raw, maxJepsenDetail), ednKind(key))
		}
		if _, dup := o.fields[string(kw)]; dup {
			return jepsenOp{}, jr.fail(k.line, "field :%s appears twice", string(kw))
		}
		o.fields[string(kw)] = jepsenField{v: val, raw: v.raw, line: k.line}
	}
	return o, nil
}

// jepsenStructured are the fields whose values the mapping interprets: they
// must be EDN. Any other field's value (:value and :error among them) may be
// one that Clojure prints and EDN does not read (#object[... 0x1f ...],
// ##Inf, #"regex", 1/2): it is kept as written (ednOpaque).
var jepsenStructured = []string{"type", "f", "process", "time", "index", "key", "owner", "token", "fencing-token", "ttl", "lease"}

// ednOpaque is a value that is not EDN, in a field whose value the mapping
// only shows as written.
type ednOpaque struct{}

// decodeEach decodes a map's forms one by one, when the library could not
// read them all at once: a value that does not decode is opaque, unless its
// field is one the mapping interprets (or the form is a key), which is
// refused naming the line and field.
func (jr *jepsenReader) decodeEach(els []form) ([]any, error) {
	vals := make([]any, len(els))
	for i, el := range els {
		v, err := decodeForm(el)
		if err == nil {
			vals[i] = v
			continue
		}
		if i%2 == 1 {
			if kw, ok := decodeKeyword(els[i-1]); ok {
				if !slices.Contains(jepsenStructured, kw) && badString(el) == nil {
					vals[i] = ednOpaque{}
					jr.left["a value that is not EDN, kept as written (:"+kw+")"]++
					continue
				}
				return nil, jr.fail(el.line, "field :%s: %v", kw, err)
			}
		}
		return nil, jr.fail(el.line, "%v", err)
	}
	return vals, nil
}

// badString is the error of the first string in fm (at any depth) that is
// not a string a reader could read (an unknown escape): such a value was
// not printed by Clojure, and is malformed.
func badString(fm form) error {
	switch raw := fm.raw; {
	case raw[0] == '"':
		_, err := decodeForm(fm)
		return err
	case isCollection(raw):
		els, err := elements(fm)
		if err != nil {
			return err
		}
		for _, el := range els {
			if err := badString(el); err != nil {
				return err
			}
		}
	case raw[0] == '#' && len(raw) > 1 && raw[1] != '"' && raw[1] != '#' && raw[1] != '_':
		_, inner := untag(fm)
		return badString(inner)
	}
	return nil
}

// decodeKeyword is the name of the keyword fm is, if it is one.
func decodeKeyword(fm form) (string, bool) {
	v, err := decodeForm(fm)
	kw, ok := v.(edn.Keyword)
	return string(kw), err == nil && ok
}

// untag splits a tagged form into its tag and the form it tags.
func untag(fm form) (string, form) {
	f := &ednFramer{data: fm.raw, pos: 1, line: fm.line}
	f.skipAtom()
	end := f.pos
	inner, _, _ := f.next(1) // the whole form was framed already
	return string(fm.raw[1:end]), inner
}

// jepsenFields are the fields the mapping reads, of client operations and
// of the nemesis's.
var (
	jepsenClientFields  = []string{"type", "f", "process", "time", "index", "value", "key", "owner", "token", "fencing-token", "ttl", "lease", "error"}
	jepsenNemesisFields = []string{"type", "f", "process", "time", "index", "value", "error"}
)

// op maps one operation.
func (jr *jepsenReader) op(fm form) error {
	o, err := jr.parseOp(fm)
	if err != nil {
		return err
	}
	jr.ops++
	for _, req := range []string{"type", "f", "process", "time"} {
		if !o.given(req) {
			return jr.fail(o.line, "missing field :%s (a Jepsen operation has :type, :f, :process and :time)", req)
		}
	}
	typ, err := jr.keyword(o, "type")
	if err != nil {
		return err
	}
	if !slices.Contains([]string{"invoke", "ok", "fail", "info"}, typ) {
		return jr.fieldErr(o, "type", ":%s: want :invoke, :ok, :fail or :info", typ)
	}
	f, ok := ednText(o.fields["f"].v)
	if !ok || f == "" {
		return jr.fieldErr(o, "f", "is %s: want a keyword such as :acquire", ednKind(o.fields["f"].v))
	}
	t, ok := ednInt(o.fields["time"].v)
	if !ok || t < 0 {
		return jr.fieldErr(o, "time", "%s: want the nanoseconds since the test began (a whole number, not negative)", compact(o.fields["time"].raw, maxJepsenDetail))
	}
	pv := o.fields["process"].v
	proc := compact(o.fields["process"].raw, maxJepsenDetail)
	if name, ok := ednText(pv); ok {
		proc = name
	}
	if last, ok := jr.procTimes[proc]; ok && t < last.time {
		return jr.fieldErr(o, "time", "%d is earlier than the %d of line %d, of the same process %s: a process's times never go back",
			t, last.time, last.line, compact(o.fields["process"].raw, maxJepsenDetail))
	}
	jr.procTimes[proc] = jepsenStamp{time: t, line: o.line}
	at := t // the time in the history's order
	if t < jr.lastTime {
		at = jr.lastTime
		jr.steps.Count++
		if back := jr.lastTime - t; back > jr.steps.Max {
			jr.steps.Max, jr.steps.Line, jr.steps.Behind = back, o.line, jr.lastTimeLine
		}
	} else {
		jr.lastTime, jr.lastTimeLine = t, o.line
	}
	if o.given("index") {
		i, ok := ednInt(o.fields["index"].v)
		if !ok || i < 0 {
			return jr.fieldErr(o, "index", "%s: want a whole number, not negative", compact(o.fields["index"].raw, maxJepsenDetail))
		}
		if i <= jr.lastIndex {
			return jr.fieldErr(o, "index", "%d does not follow the %d of line %d: indexes ascend", i, jr.lastIndex, jr.lastIndexLine)
		}
		jr.lastIndex, jr.lastIndexLine = i, o.line
	}
	if kw, ok := pv.(edn.Keyword); ok && kw == "nemesis" {
		jr.note(o, jepsenNemesisFields)
		return jr.nemesisOp(o, typ, f, at)
	}
	p, ok := ednInt(pv)
	if !ok || p < 0 || p > math.MaxInt32 {
		return jr.fieldErr(o, "process", "%s: want a client's number (0, 1, ...) or :nemesis", compact(o.fields["process"].raw, maxJepsenDetail))
	}
	return jr.clientOp(o, typ, f, int(p), at, t)
}

// keyword is a field's keyword (or string) name.
func (jr *jepsenReader) keyword(o jepsenOp, name string) (string, error) {
	switch v := o.fields[name].v.(type) {
	case edn.Keyword:
		return string(v), nil
	case string:
		return v, nil
	}
	return "", jr.fieldErr(o, name, "is %s: want a keyword", ednKind(o.fields[name].v))
}

// note counts the fields of o that the mapping does not read.
func (jr *jepsenReader) note(o jepsenOp, known []string) {
	for name := range o.fields {
		if !slices.Contains(known, name) {
			jr.left["field :"+name]++
		}
	}
}

// lockFuncs maps the :f of Jepsen's lock tests to locklab's functions.
var lockFuncs = map[string]string{
	"acquire": FAcquire, "lock": FAcquire,
	"release": FRelease, "unlock": FRelease,
	"renew": FRenew,
}

// clientOp maps an operation of client process p at time t in the
// history's order, written is its :time as written.
func (jr *jepsenReader) clientOp(o jepsenOp, typ, f string, p int, t, written int64) error {
	pr := jr.procs[p]
	if pr == nil {
		pr = &jepsenProc{at: -1}
		jr.procs[p] = pr
	}
	if pr.retired != 0 {
		return jr.fail(o.line, "process %d continues after its :info on line %d: Jepsen gives a crashed process a new number", p, pr.retired)
	}
	fn, isLock := lockFuncs[f]
	if typ == "invoke" {
		return jr.clientInvoke(o, pr, f, fn, isLock, p, t, written)
	}
	if !pr.open {
		return jr.fail(o.line, ":%s :%s of process %d without a preceding :invoke", typ, f, p)
	}
	if pr.f != f {
		return jr.fail(o.line, ":%s :%s of process %d does not complete its :invoke :%s of line %d", typ, f, p, pr.f, pr.line)
	}
	pr.open = false
	if typ == "info" {
		pr.retired = o.line
	}
	if !isLock {
		return nil
	}
	return jr.clientCompletion(o, pr, typ, fn, p, t)
}

// clientInvoke maps the invocation of a client's operation: a lock
// operation opens it (its key, owner and ttl as named or the process's
// own), any other is counted as left out.
func (jr *jepsenReader) clientInvoke(o jepsenOp, pr *jepsenProc, f, fn string, isLock bool, p int, t, written int64) error {
	if pr.open {
		return jr.fail(o.line, "process %d invokes :%s while its :%s of line %d is still open", p, f, pr.f, pr.line)
	}
	*pr = jepsenProc{open: true, f: f, line: o.line, time: written, at: -1, acquires: pr.acquires, held: pr.held}
	if !isLock {
		jr.left["op :f :"+f]++
		return nil
	}
	jr.note(o, jepsenClientFields)
	e, err := jr.clientEvent(o, Invoke, fn, p, t)
	if err != nil {
		return err
	}
	pr.keyGiven = e.Key != ""
	if !pr.keyGiven {
		e.Key = JepsenKey
	}
	pr.ownerless = e.Owner == ""
	switch fn {
	case FAcquire:
		pr.acquires++
		pr.owner = fmt.Sprintf("p%d#%d", p, pr.acquires)
	default:
		pr.owner = pr.held
	}
	if pr.ttl, err = jr.ttl(o); err != nil {
		return err
	}
	pr.at = jr.emit(e, o.line)
	return nil
}

// clientCompletion maps the completion of a client's open lock operation:
// key and owner agree with (or complete) its invocation's, an acquire or a
// renewal that succeeded gets its lease's deadline.
func (jr *jepsenReader) clientCompletion(o jepsenOp, pr *jepsenProc, typ, fn string, p int, t int64) error {
	jr.note(o, jepsenClientFields)
	e, err := jr.clientEvent(o, Type(typ), fn, p, t)
	if err != nil {
		return err
	}
	inv := &jr.out[pr.at]
	if pr.keyGiven && e.Key != "" && e.Key != inv.Key {
		return jr.fail(o.line, "the completion names key %q, its :invoke on line %d key %q", e.Key, pr.line, inv.Key)
	}
	if !pr.ownerless && e.Owner != "" && e.Owner != inv.Owner {
		return jr.fieldErr(o, "owner", "%q differs from the owner %q of its :invoke on line %d", e.Owner, inv.Owner, pr.line)
	}
	switch {
	case e.Key == "":
		e.Key = inv.Key
	case !pr.keyGiven:
		inv.Key = e.Key // the invocation named no key: the completion's is the operation's
	}
	switch {
	case e.Owner != "":
	case !pr.ownerless:
		e.Owner = inv.Owner
	default: // nobody named one: the process's own (none for a release of a process that holds nothing)
		inv.Owner, e.Owner = pr.owner, pr.owner
	}
	if typ == "ok" && (fn == FAcquire || fn == FRenew) {
		ttl, err := jr.ttl(o)
		if err != nil {
			return err
		}
		if ttl == nil {
			ttl = pr.ttl
		}
		if ttl != nil {
			if pr.time > math.MaxInt64-*ttl {
				return jr.fieldErr(o, "ttl", "%d: the lease would end after the end of time", *ttl)
			}
			e.Deadline = Ptr(pr.time + *ttl)
		}
	}
	switch {
	case typ == "ok" && fn == FAcquire:
		pr.held = e.Owner
	case typ == "ok" && fn == FRelease:
		pr.held = ""
	}
	jr.emit(e, o.line)
	return nil
}

// clientEvent is the event of a client's lock operation, with the fields
// the operation names itself.
func (jr *jepsenReader) clientEvent(o jepsenOp, typ Type, fn string, p int, t int64) (Event, error) {
	e := Event{Time: t, Process: p, Node: fmt.Sprintf("p%d", p), Type: typ, F: fn}
	var details []string
	if v, ok := o.fields["value"]; ok && v.v != nil {
		inner := v
		if tuple, ok := v.v.([]any); ok && len(tuple) == 2 && v.raw[0] == '[' {
			// jepsen.independent: [key value]
			els, err := elements(form{raw: v.raw, line: v.line})
			if err != nil || len(els) != 2 {
				return e, jr.fieldErr(o, "value", "%s: the tuple's two forms cannot be told apart", compact(v.raw, maxJepsenDetail))
			}
			key, ok := ednText(tuple[0])
			if !ok {
				return e, jr.fieldErr(o, "value", "%s: the key of a [key value] tuple is %s, want a name or a number", compact(v.raw, maxJepsenDetail), ednKind(tuple[0]))
			}
			if e.Key, ok = fitName(key); !ok {
				return e, jr.fieldErr(o, "value", "names a key longer than %d bytes", maxJepsenName)
			}
			inner = jepsenField{v: tuple[1], raw: els[1].raw, line: v.line}
		}
		if inner.v != nil {
			details = append(details, "value "+compact(inner.raw, maxJepsenDetail))
		}
	}
	if o.given("key") {
		key, ok := ednText(o.fields["key"].v)
		if !ok {
			return e, jr.fieldErr(o, "key", "is %s: want a name or a number", ednKind(o.fields["key"].v))
		}
		if e.Key != "" && e.Key != key {
			return e, jr.fieldErr(o, "key", "%q differs from the key %q of the [key value] in :value", key, e.Key)
		}
		if e.Key, ok = fitName(key); !ok {
			return e, jr.fieldErr(o, "key", "is longer than %d bytes", maxJepsenName)
		}
	}
	if o.given("owner") {
		owner, ok := ednText(o.fields["owner"].v)
		if !ok {
			return e, jr.fieldErr(o, "owner", "is %s: want a name or a number", ednKind(o.fields["owner"].v))
		}
		if e.Owner, ok = fitName(owner); !ok {
			return e, jr.fieldErr(o, "owner", "is longer than %d bytes", maxJepsenName)
		}
	}
	name, err := jr.oneOf(o, "token", "token", "fencing-token")
	if err != nil {
		return e, err
	}
	if name != "" {
		tok, ok := ednUint(o.fields[name].v)
		if !ok {
			return e, jr.fieldErr(o, name, "%s: want a whole number, not negative", compact(o.fields[name].raw, maxJepsenDetail))
		}
		e.Token = Ptr(tok)
	}
	if o.given("error") {
		details = append(details, "error "+compact(o.fields["error"].raw, maxJepsenDetail))
	}
	e.Detail = strings.Join(details, "; ")
	return e, nil
}

// fitName is s when it fits a key or an owner.
func fitName(s string) (string, bool) {
	return s, len(s) <= maxJepsenName
}

// ednUint is v as a uint64 when it is a whole number that fits.
func ednUint(v any) (uint64, bool) {
	switch x := v.(type) {
	case int64:
		return uint64(x), x >= 0
	case big.Int:
		return x.Uint64(), x.IsUint64()
	case *big.Int:
		return x.Uint64(), x.IsUint64()
	}
	return 0, false
}

// oneOf is the one of names, fields giving the same thing (what), that o
// gives: "" when it gives none, an error when it gives two.
func (jr *jepsenReader) oneOf(o jepsenOp, what string, names ...string) (string, error) {
	given := ""
	for _, name := range names {
		if !o.given(name) {
			continue
		}
		if given != "" {
			return "", jr.fieldErr(o, name, "and :%s both give the %s: give one", given, what)
		}
		given = name
	}
	return given, nil
}

// ttl is the lease length an operation gives (:ttl or :lease), or nil.
func (jr *jepsenReader) ttl(o jepsenOp) (*int64, error) {
	name, err := jr.oneOf(o, "lease", "ttl", "lease")
	if err != nil || name == "" {
		return nil, err
	}
	raw := compact(o.fields[name].raw, maxJepsenDetail)
	var ns int64
	switch v := o.fields[name].v.(type) {
	case string:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, jr.fieldErr(o, name, "%s: want a positive duration such as \"10s\", or a number of nanoseconds", raw)
		}
		ns = int64(d)
	default:
		n, ok := ednInt(v)
		if !ok || n <= 0 {
			return nil, jr.fieldErr(o, name, "%s: want a positive number of nanoseconds, or a duration such as \"10s\"", raw)
		}
		if n < minJepsenTTL {
			return nil, jr.fieldErr(o, name, "%s: a lease of %s? :%s is in nanoseconds, as :time is: write %d000000000 or \"%ds\" for %d seconds",
				raw, FormatDuration(n), name, n, n, n)
		}
		ns = n
	}
	return &ns, nil
}

// emit appends an event and returns its place in out.
func (jr *jepsenReader) emit(e Event, line int) int {
	jr.out = append(jr.out, e)
	jr.lines = append(jr.lines, line)
	jr.drop = append(jr.drop, false)
	return len(jr.out) - 1
}

// nemesisOp maps an operation of the nemesis. Jepsen's nemesis records each
// operation twice, as it begins and as it ends, both with :type :info: an
// operation with the :f of the one before it, and another type than
// :invoke, is its completion. A hand-written history may give only one.
func (jr *jepsenReader) nemesisOp(o jepsenOp, typ, f string, t int64) error {
	var value []byte
	var v any
	if fv, ok := o.fields["value"]; ok && fv.v != nil {
		value, v = fv.raw, fv.v
	}
	if n := jr.nemesis; n != nil && n.f == f && typ != "invoke" {
		jr.nemesis = nil
		return jr.completeNemesis(n, o, typ, value, v, t)
	}
	kind, role := jr.nemesisRoleOf(f)
	n := &jepsenNemesisOp{f: f, kind: kind, role: role, value: value, targets: targetsOf(v)}
	jr.nemesis = n
	detail := nemesisDetail(f, value, nil)
	fault := Event{Time: t, Process: NemesisProcess, Type: Start, F: kind, Targets: n.targets, Detail: detail}
	switch role {
	case nemesisNoFault:
		jr.left["nemesis :f :"+f]++
	case nemesisStarts:
		i := jr.emit(fault, o.line)
		n.starts = append(n.starts, i)
		jr.open = append(jr.open, jepsenWindow{kind: kind, start: i})
	case nemesisInstant:
		i := jr.emit(fault, o.line)
		n.starts = append(n.starts, i)
		stop := fault
		stop.Type = Stop
		n.stops = append(n.stops, jr.emit(stop, o.line))
	case nemesisStops:
		keep := jr.open[:0:0]
		for _, w := range jr.open {
			if w.kind != kind {
				keep = append(keep, w)
				continue
			}
			n.closed = append(n.closed, w)
			n.stops = append(n.stops, jr.emit(jr.stopOf(w, t), o.line))
		}
		jr.open = keep
		if len(n.closed) == 0 {
			jr.left["nemesis :f :"+f+" with no "+kind+" fault under way"]++
		}
	}
	return nil
}

// stopOf is the stop event of a fault, at t: the same function, targets and
// detail as its start, which is how the two are paired.
func (jr *jepsenReader) stopOf(w jepsenWindow, t int64) Event {
	s := jr.out[w.start]
	return Event{Time: t, Process: NemesisProcess, Type: Stop, F: s.F, Targets: slices.Clone(s.Targets), Detail: s.Detail}
}

// completeNemesis maps the completion of the nemesis operation n: the fault
// it started is described by both values, and what it stopped stops at its
// completion. A completion that failed did nothing.
func (jr *jepsenReader) completeNemesis(n *jepsenNemesisOp, o jepsenOp, typ string, value []byte, v any, t int64) error {
	if typ == "fail" {
		for _, i := range append(slices.Clone(n.starts), n.stops...) {
			jr.drop[i] = true
		}
		jr.open = slices.DeleteFunc(jr.open, func(w jepsenWindow) bool { return slices.Contains(n.starts, w.start) })
		jr.open = append(jr.open, n.closed...)
		slices.SortFunc(jr.open, func(a, b jepsenWindow) int { return a.start - b.start })
		return nil
	}
	targets := targetsOf(v)
	if targets == nil {
		targets = n.targets
	}
	for _, i := range n.starts {
		jr.out[i].Targets = targets
		jr.out[i].Detail = nemesisDetail(n.f, n.value, value)
	}
	for _, i := range n.stops {
		jr.drop[i] = true
	}
	switch n.role {
	case nemesisInstant:
		for _, i := range n.starts {
			jr.emit(jr.stopOf(jepsenWindow{start: i}, t), o.line)
		}
	case nemesisStops:
		for _, w := range n.closed {
			jr.emit(jr.stopOf(w, t), o.line)
		}
	}
	return nil
}

// nemesisDetail is a fault's detail: the nemesis's :f and the values of its
// invocation and completion.
func nemesisDetail(f string, inv, done []byte) string {
	s := ":" + f
	if inv != nil {
		s += " " + compact(inv, maxJepsenDetail)
	}
	if done != nil && string(done) != string(inv) {
		s += " -> " + compact(done, maxJepsenDetail)
	}
	return s
}

// targetsOf are the nodes a nemesis value names: a collection of node
// names, or a map from node names (a grudge, or the outcome per node); nil
// for anything else.
func targetsOf(v any) []string {
	var names []any
	sorted := false
	switch x := v.(type) {
	case []any:
		names = x
	case map[any]bool:
		for k := range x {
			names = append(names, k)
		}
		sorted = true
	case map[any]any:
		for k := range x {
			names = append(names, k)
		}
		sorted = true
	default:
		return nil
	}
	if len(names) == 0 || len(names) > maxJepsenTarget {
		return nil
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		s, ok := n.(string)
		if !ok {
			if kw, isKw := n.(edn.Keyword); isKw {
				s, ok = string(kw), true
			}
		}
		if !ok || s == "" || len(s) > maxJepsenName || slices.Contains(out, s) {
			return nil
		}
		out = append(out, s)
	}
	if sorted {
		slices.Sort(out)
	}
	return out
}

// finish numbers the events, checks them as Read would, and says what was
// left out.
func (jr *jepsenReader) finish() (Jepsen, error) {
	for _, pr := range jr.procs {
		if pr.open && pr.at >= 0 && pr.ownerless && pr.owner != "" {
			jr.out[pr.at].Owner = pr.owner // a release still open: its process's holding
		}
	}
	out := make([]Event, 0, len(jr.out))
	lines := make([]int, 0, len(jr.out))
	for i, e := range jr.out {
		if jr.drop[i] {
			continue
		}
		e.Index = len(out)
		out = append(out, e)
		lines = append(lines, jr.lines[i])
	}
	v := newValidator()
	for i, e := range out {
		if err := v.check(e, i); err != nil {
			return Jepsen{}, jr.fail(lines[i], "%v", err)
		}
		if n, err := writtenLen(e); err != nil || n > MaxLineBytes {
			return Jepsen{}, jr.fail(lines[i], "the operation does not fit a line of the locklab format (%d bytes)", n)
		}
	}
	h := Jepsen{Events: out, Ops: jr.ops, Steps: jr.steps}
	for what, n := range jr.left {
		h.Left = append(h.Left, JepsenLeft{What: what, Count: n})
	}
	slices.SortFunc(h.Left, func(a, b JepsenLeft) int { return strings.Compare(a.What, b.What) })
	return h, nil
}
