package nemesis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Parse reads a schedule from JSON and validates it. Every mistake is an
// *Error naming the file (name) and the line, and within a fault its index and
// field: a syntax error, an empty file, an unknown or repeated field, a value
// of the wrong type, a bad duration, and whatever Validate rejects. Field names
// are matched exactly ("Kind" is not "kind").
func Parse(data []byte, name string) (Schedule, error) {
	p := &parser{data: data, name: name, lines: map[string]int{}}
	for i, c := range data {
		if c == '\n' {
			p.newlines = append(p.newlines, int64(i))
		}
	}
	s, err := p.schedule()
	if err != nil {
		return Schedule{}, err
	}
	s.src = &source{file: name, lines: p.lines}
	if err := s.Validate(); err != nil {
		return Schedule{}, err
	}
	return s, nil
}

// parser reads one schedule file, recording the line of every fault and
// field it meets.
type parser struct {
	data     []byte
	name     string
	lines    map[string]int
	newlines []int64 // offsets of the file's newlines
}

// member is one "key": value of a JSON object, or one value of a JSON array
// (without a key).
type member struct {
	key  string
	raw  json.RawMessage
	base int64 // offset of raw in the file
	line int   // line of the key (of an array's value: where it begins, or the separator before it)
}

// line is the line (from 1) of the byte at offset.
func (p *parser) line(offset int64) int {
	n, _ := slices.BinarySearch(p.newlines, offset)
	return n + 1
}

// fail is an error at offset about the schedule as a whole.
func (p *parser) fail(line int, field, msg string) *Error {
	return &Error{File: p.name, Line: line, Fault: -1, Field: field, Msg: msg}
}

const scheduleExample = `{"faults": [{"kind": "pause", "targets": ["c1"], "at": "5s", "duration": "2s"}]}`

func (p *parser) schedule() (Schedule, error) {
	trimmed := bytes.TrimSpace(p.data)
	if len(trimmed) == 0 {
		return Schedule{}, p.fail(1, "", "empty file: a schedule is a JSON object such as "+scheduleExample)
	}
	var v any
	if err := json.Unmarshal(p.data, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Schedule{}, p.fail(p.line(se.Offset), "", "JSON syntax: "+se.Error())
		}
		return Schedule{}, p.fail(1, "", "JSON: "+err.Error())
	}
	start := int64(len(p.data) - len(bytes.TrimLeft(p.data, " \t\r\n")))
	ms, err := p.members(p.data, 0)
	if err != nil {
		return Schedule{}, err
	}
	if ms == nil {
		return Schedule{}, p.fail(p.line(start), "", fmt.Sprintf("a schedule is a JSON object such as %s, not %s", scheduleExample, show(trimmed)))
	}
	var faults *member
	for i, m := range ms {
		switch {
		case m.key != "faults":
			return Schedule{}, p.fail(m.line, "", fmt.Sprintf(`unknown field %q (a schedule has one field, "faults")`, m.key))
		case faults != nil:
			return Schedule{}, p.fail(m.line, "faults", "given twice")
		}
		faults = &ms[i]
	}
	if faults == nil {
		return Schedule{}, p.fail(p.line(start), "", `missing field "faults" (a schedule without faults is {"faults": []})`)
	}
	els, err := p.elements(faults.raw, faults.base)
	if err != nil {
		return Schedule{}, err
	}
	if els == nil {
		return Schedule{}, p.fail(faults.line, "faults", "want a list of faults, got "+show(faults.raw))
	}
	s := Schedule{Faults: make([]Fault, 0, len(els))}
	for i, el := range els {
		f, err := p.fault(i, el)
		if err != nil {
			return Schedule{}, err
		}
		s.Faults = append(s.Faults, f)
	}
	return s, nil
}

// fault reads faults[i]: its kind first, so that every later error names it.
func (p *parser) fault(i int, el member) (Fault, error) {
	path := fmt.Sprintf("faults[%d]", i)
	line := p.line(el.base)
	p.lines[path] = line
	ms, err := p.members(el.raw, el.base)
	if err != nil {
		return Fault{}, err
	}
	if ms == nil {
		return Fault{}, &Error{File: p.name, Line: line, Fault: i,
			Msg: `want a fault, a JSON object such as {"kind": "pause", "targets": ["c1"], "at": "5s", "duration": "2s"}, got ` + show(el.raw)}
	}
	var f Fault
	for _, m := range ms {
		if m.key == "kind" {
			if err := json.Unmarshal(m.raw, &f.Kind); err != nil {
				return Fault{}, &Error{File: p.name, Line: m.line, Fault: i, Field: "kind",
					Msg: fmt.Sprintf("want one of %s, got %s", joinKinds(Kinds), show(m.raw))}
			}
		}
	}
	d := decoding{p: p, path: path, fault: i, kind: f.Kind}
	return f, d.into(&f, ms, "")
}

// decoding reads the members of one fault, or of its trigger, into a struct.
type decoding struct {
	p     *parser
	path  string // "faults[2]"
	fault int
	kind  Kind
}

func (d decoding) errorf(line int, field, format string, args ...any) *Error {
	return &Error{File: d.p.name, Line: line, Fault: d.fault, Kind: d.kind, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// into decodes ms into dst (a *Fault or *Trigger); prefix is "" for a fault
// and "after." or "until." for one of its triggers.
func (d decoding) into(dst any, ms []member, prefix string) error {
	v := reflect.ValueOf(dst).Elem()
	names, index := jsonFields(v.Type())
	seen := map[string]bool{}
	for _, m := range ms {
		field := prefix + m.key
		i, ok := index[m.key]
		switch {
		case !ok:
			what := "a fault"
			if prefix != "" {
				what = fmt.Sprintf("a trigger (%q)", strings.TrimSuffix(prefix, "."))
			}
			return d.errorf(m.line, "", "unknown field %q (%s has %s)", field, what, strings.Join(names, ", "))
		case seen[m.key]:
			return d.errorf(m.line, field, "given twice")
		}
		seen[m.key] = true
		d.p.lines[d.path+"."+field] = m.line
		fv := v.Field(i)
		if fv.Type() == reflect.TypeFor[*Trigger]() {
			if err := d.trigger(fv, m); err != nil {
				return err
			}
			continue
		}
		if err := json.Unmarshal(m.raw, fv.Addr().Interface()); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return d.errorf(m.line, field, "want %s, got %s", describeType(fv.Type()), show(m.raw))
			}
			return d.errorf(m.line, field, "%v", err)
		}
	}
	return nil
}

// trigger decodes the "after" or "until" member m into fv (a *Trigger
// field).
func (d decoding) trigger(fv reflect.Value, m member) error {
	if string(m.raw) == "null" {
		return nil
	}
	ms, err := d.p.members(m.raw, m.base)
	if err != nil {
		return err
	}
	if ms == nil {
		return d.errorf(m.line, m.key, `want a trigger such as {"node": "c1", "f": "acquire"}, got %s`, show(m.raw))
	}
	t := &Trigger{}
	if err := d.into(t, ms, m.key+"."); err != nil {
		return err
	}
	fv.Set(reflect.ValueOf(t))
	return nil
}

// members reads the JSON object raw (at offset base of the file); nil if raw
// is not an object. The file is already known to be valid JSON.
func (p *parser) members(raw []byte, base int64) ([]member, error) {
	return p.values(raw, base, '{')
}

// elements reads the JSON array raw (at offset base of the file); nil if raw
// is not an array.
func (p *parser) elements(raw []byte, base int64) ([]member, error) {
	return p.values(raw, base, '[')
}

// values reads the members of the JSON object (open '{') or the elements of
// the JSON array (open '[') raw, at offset base of the file; nil if raw is
// not one.
func (p *parser) values(raw []byte, base int64, open json.Delim) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != open {
		return nil, nil
	}
	out := []member{}
	for dec.More() {
		var key string
		if open == '{' {
			t, err := dec.Token()
			if err != nil {
				return nil, p.fail(p.line(base+dec.InputOffset()), "", "JSON: "+err.Error())
			}
			key, _ = t.(string)
		}
		line := p.line(base + dec.InputOffset())
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, p.fail(line, "", "JSON: "+err.Error())
		}
		out = append(out, member{key: key, raw: v, base: base + dec.InputOffset() - int64(len(v)), line: line})
	}
	return out, nil
}

// jsonFields lists the JSON names of a struct's fields in order, and maps
// each to its field index.
func jsonFields(t reflect.Type) ([]string, map[string]int) {
	var names []string
	index := map[string]int{}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() || name == "" || name == "-" {
			continue
		}
		names = append(names, name)
		index[name] = i
	}
	return names, index
}

// describeType says what JSON value a field of type t takes.
func describeType(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[[]string]():
		return "a list of node names such as [\"c1\"]"
	case reflect.TypeFor[[][]string]():
		return "a list of groups, each a list of node names, such as [[\"c1\"], [\"redis\"]]"
	case reflect.TypeFor[Kind](), reflect.TypeFor[string]():
		return "a string"
	case reflect.TypeFor[float64]():
		return "a number"
	case reflect.TypeFor[int]():
		return "an integer"
	}
	return t.String()
}

// show renders a JSON value briefly for an error message.
func show(raw []byte) string {
	s := string(bytes.TrimSpace(raw))
	if r := []rune(s); len(r) > 40 {
		s = string(r[:37]) + "..."
	}
	switch {
	case s == "null":
		return "null"
	case strings.HasPrefix(s, "{"):
		return "an object " + s
	case strings.HasPrefix(s, "["):
		return "a list " + s
	case strings.HasPrefix(s, `"`):
		return "the string " + s
	case s == "true" || s == "false":
		return s
	}
	return "the number " + s
}
