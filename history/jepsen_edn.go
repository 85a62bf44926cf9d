package history

import (
	"fmt"
	"math/big"
	"strings"
	"unicode"
	"unicode/utf8"

	"olympos.io/encoding/edn"
)

// form is one EDN form as it appears in a file: its bytes and the line it
// starts on. The EDN library decodes a form's value; the framing here finds
// where each form begins and ends, so that every error names its line, a
// map's keys are seen in order (the library keeps the last of two equal keys
// without a word) and a value can be shown as it was written.
type form struct {
	raw  []byte
	line int
}

// ednFramer splits EDN text into forms without decoding them.
type ednFramer struct {
	data []byte
	pos  int
	line int
}

// maxEDNDepth bounds how deeply forms may nest in a Jepsen history (an
// operation map holding a value holding a map is depth 3).
const maxEDNDepth = 64

// errFramer is a framing error with the line it concerns.
type errFramer struct {
	line int
	msg  string
}

func (e *errFramer) Error() string { return e.msg }

func (f *ednFramer) fail(line int, format string, args ...any) error {
	return &errFramer{line: line, msg: fmt.Sprintf(format, args...)}
}

// skipSpace skips white space, commas and comments.
func (f *ednFramer) skipSpace() {
	for f.pos < len(f.data) {
		switch c := f.data[f.pos]; {
		case c == '\n':
			f.line++
			f.pos++
		case c == ';':
			for f.pos < len(f.data) && f.data[f.pos] != '\n' {
				f.pos++
			}
		default:
			n := spaceLen(f.data, f.pos)
			if n == 0 {
				return
			}
			f.pos += n
		}
	}
}

// spaceLen is the length of the white space character (or comma) at
// data[i], or 0: white space is what the EDN library takes for it, any
// Unicode space.
func spaceLen(data []byte, i int) int {
	c := data[i]
	if c < utf8.RuneSelf {
		if c == ',' || unicode.IsSpace(rune(c)) {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRune(data[i:])
	if unicode.IsSpace(r) {
		return n
	}
	return 0
}

// delimiterAt reports whether data[i] ends a symbol, number, keyword or
// character, as it does for the EDN library.
func delimiterAt(data []byte, i int) bool {
	switch data[i] {
	case ';', '"', '(', ')', '[', ']', '{', '}', '\\':
		return true
	}
	return spaceLen(data, i) > 0
}

// skipAtom moves past the characters of a symbol, number or keyword.
func (f *ednFramer) skipAtom() {
	for f.pos < len(f.data) && !delimiterAt(f.data, f.pos) {
		f.pos++
	}
}

// closer is the byte that closes a collection opened by c.
func closer(c byte) byte {
	switch c {
	case '(':
		return ')'
	case '[':
		return ']'
	}
	return '}'
}

// collectionName names the collection opened by the form starting with raw.
func collectionName(raw []byte) string {
	switch {
	case len(raw) > 1 && raw[0] == '#' && raw[1] == '{':
		return "set"
	case len(raw) > 0 && raw[0] == '(':
		return "list"
	case len(raw) > 0 && raw[0] == '[':
		return "vector"
	}
	return "map"
}

// next returns the next form at depth, after white space; ok is false at the
// end of the data or before a closing bracket (left unread).
func (f *ednFramer) next(depth int) (form, bool, error) {
	f.skipSpace()
	if f.pos >= len(f.data) {
		return form{}, false, nil
	}
	start, line := f.pos, f.line
	switch c := f.data[f.pos]; {
	case c == ')' || c == ']' || c == '}':
		return form{}, false, nil
	case c == '(' || c == '[' || c == '{' || (c == '#' && f.pos+1 < len(f.data) && f.data[f.pos+1] == '{'):
		if depth >= maxEDNDepth {
			return form{}, false, f.fail(line, "forms nested more than %d deep", maxEDNDepth)
		}
		if c == '#' {
			f.pos++
		}
		open := f.data[f.pos]
		f.pos++
		for {
			_, ok, err := f.next(depth + 1)
			if err != nil {
				return form{}, false, err
			}
			if !ok {
				break
			}
		}
		if f.pos >= len(f.data) {
			return form{}, false, f.fail(line, "the %s opened on line %d is not closed", collectionName(f.data[start:]), line)
		}
		if got := f.data[f.pos]; got != closer(open) {
			return form{}, false, f.fail(f.line, "%q closes the %s opened on line %d with %q", got, collectionName(f.data[start:]), line, open)
		}
		f.pos++
	case c == '#' && f.pos+1 < len(f.data) && f.data[f.pos+1] == '"':
		// A regular expression as Clojure prints it (#"a.*"): a string
		// after the '#'.
		f.pos++
		if _, _, err := f.next(depth + 1); err != nil {
			return form{}, false, err
		}
	case c == '#' && f.pos+1 < len(f.data) && f.data[f.pos+1] == '#':
		// A symbolic value as Clojure prints it (##Inf, ##NaN).
		f.pos += 2
		f.skipAtom()
	case c == '#':
		// A tag (#inst "...", #jepsen.history.Op {...}) or a discard (#_ x):
		// the symbol, then the form it applies to.
		f.pos++
		f.skipAtom()
		if f.pos == start+1 {
			return form{}, false, f.fail(line, "a lone '#'")
		}
		if _, ok, err := f.next(depth + 1); err != nil {
			return form{}, false, err
		} else if !ok {
			return form{}, false, f.fail(line, "%s is not followed by a form", f.data[start:f.pos])
		}
	case c == '"':
		f.pos++
		for {
			if f.pos >= len(f.data) {
				return form{}, false, f.fail(line, "the string opened on line %d is not closed", line)
			}
			switch f.data[f.pos] {
			case '\\':
				f.pos++
			case '\n':
				f.line++
			case '"':
				f.pos++
				return form{raw: f.data[start:f.pos], line: line}, true, nil
			}
			f.pos++
		}
	case c == '\\':
		// A character: \c, \newline, \u00e9 (the rune after the backslash
		// is the character even when it is a delimiter).
		f.pos++
		if f.pos >= len(f.data) {
			return form{}, false, f.fail(line, "a lone '\\' at the end")
		}
		_, n := utf8.DecodeRune(f.data[f.pos:])
		f.pos += n
		f.skipAtom()
	default:
		f.skipAtom()
	}
	return form{raw: f.data[start:f.pos], line: line}, true, nil
}

// elements returns the forms of a collection form's inside, without the
// discarded ones (#_ x).
func elements(c form) ([]form, error) {
	raw := c.raw
	open := 1
	if raw[0] == '#' {
		open = 2
	}
	inner := &ednFramer{data: raw[:len(raw)-1], pos: open, line: c.line}
	return inner.all(1)
}

// all returns every form up to the end of the data, without the discarded
// ones.
func (f *ednFramer) all(depth int) ([]form, error) {
	var out []form
	for {
		fm, ok, err := f.next(depth)
		if err != nil {
			return nil, err
		}
		if !ok {
			if f.pos < len(f.data) {
				return nil, f.fail(f.line, "%q closes nothing", f.data[f.pos])
			}
			return out, nil
		}
		if isDiscard(fm.raw) {
			continue
		}
		out = append(out, fm)
	}
}

func isDiscard(raw []byte) bool { return len(raw) > 1 && raw[0] == '#' && raw[1] == '_' }

// isCollection reports whether raw is a list, vector, map or set.
func isCollection(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '(' || raw[0] == '[' || raw[0] == '{' || (raw[0] == '#' && len(raw) > 1 && raw[1] == '{'))
}

// decodeForm decodes one form's value with the EDN library.
func decodeForm(fm form) (any, error) {
	var v any
	if err := edn.Unmarshal(fm.raw, &v); err != nil {
		return nil, fmt.Errorf("not valid EDN: %s", ednErrorText(err))
	}
	return v, nil
}

// ednErrorText is the library's error in a sentence of its own (it passes
// on strconv's errors for numbers, which name a Go function).
func ednErrorText(err error) string {
	s := err.Error()
	if strings.Contains(s, "value out of range") || strings.Contains(s, "cannot unmarshal int") {
		return "a number out of range (64 bits; write a larger one with N, as 12345678901234567890N)"
	}
	if strings.HasPrefix(s, "strconv.") {
		if _, after, ok := strings.Cut(s, ": "); ok {
			s = after
		}
	}
	if s != "" {
		s = strings.ToLower(s[:1]) + s[1:]
	}
	return s
}

// compact renders a form's text on one line, its runs of white space
// (outside strings) made one space and commas dropped, at most max bytes
// (cut at a character with "…").
func compact(raw []byte, max int) string {
	var b strings.Builder
	inString, space := false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			b.WriteByte(c)
			switch c {
			case '\\':
				if i+1 < len(raw) {
					i++
					b.WriteByte(raw[i])
				}
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n', '\f', ',':
			space = true
			continue
		case ';':
			for i < len(raw) && raw[i] != '\n' {
				i++
			}
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		if c == '"' {
			inString = true
		}
		b.WriteByte(c)
	}
	s := b.String()
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ednText is the text a scalar names: a string's contents, a keyword's or a
// symbol's name, a number's digits; ok is false for anything else.
func ednText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case edn.Keyword:
		return string(x), true
	case edn.Symbol:
		return string(x), true
	case int64:
		return fmt.Sprint(x), true
	case big.Int:
		return x.String(), true
	case *big.Int:
		return x.String(), true
	}
	return "", false
}

// ednInt is v as an int64 when it is a whole number that fits.
func ednInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case big.Int:
		if x.IsInt64() {
			return x.Int64(), true
		}
	case *big.Int:
		if x.IsInt64() {
			return x.Int64(), true
		}
	}
	return 0, false
}

// ednKind names the kind of a decoded EDN value, for errors.
func ednKind(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case bool:
		return "true or false"
	case string:
		return "a string"
	case edn.Keyword:
		return "a keyword"
	case edn.Symbol:
		return "a symbol"
	case int64, big.Int, *big.Int:
		return "an integer"
	case float64, big.Float, *big.Float:
		return "a decimal number"
	case int32:
		return "a character"
	case []any:
		return "a list or vector"
	case map[any]any:
		return "a map"
	case map[any]bool:
		return "a set"
	case edn.Tag:
		return "a tagged value"
	case ednOpaque:
		return "a value that is not EDN"
	}
	return fmt.Sprintf("a %T", v)
}

// decodeElements decodes the forms of inner, the inside of a collection, as
// the EDN library reads them.
func decodeElements(inner []byte) ([]any, error) {
	buf := make([]byte, 0, len(inner)+2)
	buf = append(append(append(buf, '['), inner...), ']')
	var v []any
	if err := edn.Unmarshal(buf, &v); err != nil {
		return nil, fmt.Errorf("not valid EDN: %s", ednErrorText(err))
	}
	return v, nil
}
