// Package jsonerr turns the errors of encoding/json into messages for the
// person who wrote the file: JSON's vocabulary ("a whole number", "a list of
// strings") instead of Go's ("int64", "[]string", "map[string]interface {}").
package jsonerr

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Plain rewrites a decoding error of encoding/json without Go type names or
// the "json: " prefix; other errors are returned as they are. A type error
// names the field: field "time": want a whole number, got a string.
func Plain(err error) error {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return errors.New(TypeError(ute))
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: "); ok {
		return errors.New(msg)
	}
	return err
}

// TypeError describes a JSON value of the wrong type for its field.
func TypeError(ute *json.UnmarshalTypeError) string {
	got := ute.Value
	switch got {
	case "array", "object":
		got = "an " + got
	case "string", "number":
		got = "a " + got
	case "bool":
		got = "true or false"
	default:
		if lit, ok := strings.CutPrefix(got, "number "); ok {
			got = lit
			if isInteger(ute.Type) && isDigits(strings.TrimPrefix(lit, "-")) && (isSigned(ute.Type) || !strings.HasPrefix(lit, "-")) {
				got += ", which is out of range"
			}
		}
	}
	if ute.Field == "" {
		return fmt.Sprintf("want %s, got %s", Describe(ute.Type), got)
	}
	return fmt.Sprintf("field %q: want %s, got %s", ute.Field, Describe(ute.Type), got)
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// Describe names the JSON value a Go type reads: "a whole number", "a list
// of strings", "an object".
func Describe(t reflect.Type) string {
	t = deref(t)
	if t == nil {
		return "a value"
	}
	if t.Kind() != reflect.String && reflect.PointerTo(t).Implements(textUnmarshaler) {
		return "a string"
	}
	switch {
	case isSigned(t):
		return "a whole number"
	case isInteger(t):
		return "a whole number ≥ 0"
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list of " + plural(t.Elem())
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value"
}

// plural names the elements of a list: "strings", "whole numbers".
func plural(t reflect.Type) string {
	switch d := Describe(t); d {
	case "a whole number", "a number", "a string":
		return strings.TrimPrefix(d, "a ") + "s"
	case "a whole number ≥ 0":
		return "whole numbers ≥ 0"
	case "an object":
		return "objects"
	case "true or false":
		return "true or false values"
	}
	return "values"
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// integerKind reports whether t (through pointers) is an integer type, and
// whether a signed one.
func integerKind(t reflect.Type) (integer, signed bool) {
	if t = deref(t); t == nil {
		return false, false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return true, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true, false
	}
	return false, false
}

func isSigned(t reflect.Type) bool {
	_, signed := integerKind(t)
	return signed
}

func isInteger(t reflect.Type) bool {
	integer, _ := integerKind(t)
	return integer
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
