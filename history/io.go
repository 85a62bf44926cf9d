package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/locklab/locklab/internal/jsonerr"
)

// Header is the optional first line of a history file.
type Header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
}

// Write writes a header and the events as JSON Lines. An event whose line
// would be longer than MaxLineBytes is an error (Read would refuse it); Read
// refuses every line Write could not write back, so a history Read accepted
// can always be written.
func Write(w io.Writer, events []Event) error {
	bw := bufio.NewWriter(w)
	var line bytes.Buffer
	enc := newLineEncoder(&line)
	if err := enc.Encode(Header{Format: FormatName, Version: Version}); err != nil {
		return fmt.Errorf("write history header: %w", err)
	}
	if _, err := bw.Write(line.Bytes()); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	line.Reset()
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("write history event %d: %w", e.Index, err)
		}
		if n := line.Len() - 1; n > MaxLineBytes { // the newline is not counted
			return fmt.Errorf("write history event %d: %w (%d bytes)", e.Index, ErrLineTooLong, n)
		}
		if _, err := bw.Write(line.Bytes()); err != nil {
			return fmt.Errorf("write history: %w", err)
		}
		line.Reset()
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return nil
}

// newLineEncoder is the encoder of Write: one event per line, HTML
// characters as they are.
func newLineEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// writtenLen is the length of e's line as Write writes it, without the newline.
func writtenLen(e Event) (int, error) {
	var line bytes.Buffer
	if err := newLineEncoder(&line).Encode(e); err != nil {
		return 0, err
	}
	return line.Len() - 1, nil
}

// ParseError is a malformed line of a history, with its position.
type ParseError struct {
	File   string
	Line   int
	Reason string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// ErrIsDirectory is returned by ReadFile for a path that names a directory.
var ErrIsDirectory = errors.New("is a directory, not a history file")

// ReadFile reads and validates the history in path.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("read history: %s %w", path, ErrIsDirectory)
	}
	return Read(f, path)
}

// MaxLineBytes bounds one line of a history file, the newline not counted,
// for Read and Write alike.
const MaxLineBytes = 1 << 20

// expansionMax bounds how much longer Write makes an event than the line it
// was read from: a string's U+2028 (3 bytes) is written \u2028 (6), an escape
// such as \b is never longer than \u0008, and Write adds the index
// (under 32 bytes). Read re-encodes the lines that could grow past
// MaxLineBytes to be sure they will not.
const expansionMax = 3

// ErrLineTooLong is returned by Write for an event whose line would be longer
// than MaxLineBytes (Read would refuse it).
var ErrLineTooLong = errors.New("event is longer than the line limit")

// Read reads and validates a history from r; name is used in error messages.
func Read(r io.Reader, name string) ([]Event, error) {
	sc := bufio.NewScanner(r)
	// Room for a line of MaxLineBytes and its "\r\n": a longer line is refused below.
	sc.Buffer(make([]byte, 64*1024), MaxLineBytes+2)
	v := newValidator()
	var events []Event
	line := 0
	fail := func(format string, args ...any) error {
		return &ParseError{File: name, Line: line, Reason: fmt.Sprintf(format, args...)}
	}
	blankSeen := 0
	tooLong := func() error {
		return fail("line longer than %d bytes", MaxLineBytes)
	}
	for sc.Scan() {
		line++
		if len(sc.Bytes()) > MaxLineBytes {
			return nil, tooLong()
		}
		if i := invalidUTF8(sc.Bytes()); i >= 0 {
			return nil, fail("not valid UTF-8 (byte %d of the line): a history is UTF-8 text", i+1)
		}
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			blankSeen = line
			continue
		}
		if blankSeen != 0 {
			line = blankSeen
			return nil, fail("blank line inside the history")
		}
		if line == 1 && isHeader(raw) {
			var h Header
			if _, err := objectKeys(raw, headerKeys); err != nil {
				return nil, fail("bad header: %v", err)
			}
			if err := strictUnmarshal(raw, &h); err != nil {
				return nil, fail("bad header: %v", err)
			}
			if h.Format != FormatName {
				return nil, fail("header format %q, want %q", h.Format, FormatName)
			}
			if h.Version != Version {
				return nil, fail("history format version %d is not supported (this locklab reads version %d)", h.Version, Version)
			}
			continue
		}
		e, hasIndex, err := decodeEvent(raw)
		if err != nil {
			return nil, fail("%v", err)
		}
		if !hasIndex {
			e.Index = len(events)
		}
		if err := v.check(e, len(events)); err != nil {
			return nil, fail("%v", err)
		}
		if len(raw)*expansionMax+64 > MaxLineBytes {
			n, err := writtenLen(e)
			if err != nil {
				return nil, fail("%v", err)
			}
			if n > MaxLineBytes {
				return nil, fail("the event takes %d bytes when written back (with its index, and characters such as U+2028 escaped), more than the %d-byte line limit", n, MaxLineBytes)
			}
		}
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			line++
			return nil, tooLong()
		}
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == name {
			return nil, err // it names the file already
		}
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return events, nil
}

// invalidUTF8 is the offset of the first byte of b that is not valid UTF-8,
// or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

func isHeader(raw []byte) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) != nil {
		return false
	}
	_, ok := probe["format"]
	return ok
}

func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return cleanJSONError(err)
	}
	if dec.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

func cleanJSONError(err error) error { return jsonerr.Plain(err) }

func decodeEvent(raw []byte) (Event, bool, error) {
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return Event{}, false, fmt.Errorf("not a JSON event: %v", cleanJSONError(err))
		}
		return Event{}, false, fmt.Errorf("not a JSON event: want an object, got %s", jsonKind(v))
	}
	set, err := objectKeys(raw, eventKeys)
	if err != nil {
		return Event{}, false, err
	}
	for _, req := range []string{"time", "process", "type", "f"} {
		if !set[req] {
			return Event{}, false, fmt.Errorf("missing field %q", req)
		}
	}
	var e Event // the keys are known to be exact: a plain Unmarshal is strict here
	if err := json.Unmarshal(raw, &e); err != nil {
		return Event{}, false, cleanJSONError(err)
	}
	if len(e.Targets) == 0 {
		e.Targets = nil // "targets":[] and no targets are the same
	}
	return e, set["index"], nil
}

// jsonKind names the kind of a decoded JSON value.
func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "true or false"
	case nil:
		return "null"
	}
	return "an object" // with trailing data
}

// eventKeys are the field names of an event line.
var eventKeys = jsonKeys(reflect.TypeFor[Event]())

// headerKeys are the field names of the header line.
var headerKeys = jsonKeys(reflect.TypeFor[Header]())

func jsonKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}

// objectKeys returns the top-level keys of raw, a valid JSON object, that
// have a value other than null. It rejects what encoding/json would quietly
// accept: a field name in another case ("Time") and a field given twice, and
// names a field that is not in known.
func objectKeys(raw []byte, known []string) (map[string]bool, error) {
	set := map[string]bool{}
	seen := map[string]bool{}
	depth, expectKey := 0, false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '{', '[':
			depth++
			expectKey = c == '{' && depth == 1
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		case '"':
			end := stringEnd(raw, i)
			if depth == 1 && expectKey {
				key, err := unquote(raw[i : end+1])
				if err != nil {
					return nil, err
				}
				if err := checkKey(key, known, seen); err != nil {
					return nil, err
				}
				set[key] = !bytes.HasPrefix(valueAfter(raw[end+1:]), []byte("null"))
				expectKey = false
			}
			i = end
		}
	}
	return set, nil
}

// valueAfter is the value that follows a key: rest without the colon and
// the white space around it.
func valueAfter(rest []byte) []byte {
	const space = " \t\r\n"
	return bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(rest, space), []byte(":")), space)
}

// stringEnd is the index of the quote that closes the JSON string opening at i.
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(raw) - 1
}

func unquote(quoted []byte) (string, error) {
	if !bytes.ContainsRune(quoted, '\\') {
		return string(quoted[1 : len(quoted)-1]), nil
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", fmt.Errorf("bad field name %s", quoted)
	}
	return s, nil
}

func checkKey(key string, known []string, seen map[string]bool) error {
	if seen[key] {
		return fmt.Errorf("field %q appears twice", key)
	}
	seen[key] = true
	if slices.Contains(known, key) {
		return nil
	}
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return fmt.Errorf("field %q: field names are lower case (%q)", key, k)
		}
	}
	return fmt.Errorf("unknown field %q", key)
}
