package opt

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/suggest"
)

// Option is one option of a lock system or a workload, declared once: its
// name on the command line, what it means, its default and how its text is
// read into the options struct T. Make one with Var (or Embed one of another
// table); a Table of them drives the defaults, the accepted names, Set and
// the documentation.
type Option[T any] struct {
	// Name is the key of `-o key=value` (or `-w key=value`).
	Name string
	// Doc says what the option means: one sentence, no final period.
	Doc string
	// Default is the default in the textual form Set reads; Table.Defaults
	// applies it, so the documented default is the one that is used.
	Default string
	// Accepts describes the values Set takes ("a duration > 0").
	Accepts string
	set     func(o *T, value string) error
	get     func(o *T) string
}

// Var declares an option stored in the field of T that field points to, read
// by p.
func Var[T, V any](name, doc, def string, field func(*T) *V, p Parser[V]) Option[T] {
	return Option[T]{Name: name, Doc: doc, Default: def, Accepts: p.Accepts,
		set: func(o *T, s string) error {
			v, err := p.Parse(s)
			if err != nil {
				return err
			}
			*field(o) = v
			return nil
		},
		get: func(o *T) string { return p.Format(*field(o)) },
	}
}

// Embed lifts the options of a table over E to a struct T that holds an E
// (an embedded struct), so options shared by several workloads are declared
// once.
func Embed[T, E any](opts []Option[E], inner func(*T) *E) []Option[T] {
	out := make([]Option[T], len(opts))
	for i, o := range opts {
		out[i] = Option[T]{Name: o.Name, Doc: o.Doc, Default: o.Default, Accepts: o.Accepts,
			set: func(t *T, s string) error { return o.set(inner(t), s) },
			get: func(t *T) string { return o.get(inner(t)) },
		}
	}
	return out
}

// Only is the table's options of the given names, in that order: the part
// of a system's options that a table of its own (a user's lock over the
// same servers) keeps. A name the table does not have is a programming
// error (panic).
func (t Table[T]) Only(names ...string) []Option[T] {
	out := make([]Option[T], 0, len(names))
	for _, name := range names {
		i := slices.IndexFunc(t.Options, func(o Option[T]) bool { return o.Name == name })
		if i < 0 {
			panic(fmt.Sprintf("opt: %s has no option %q", t.Owner, name))
		}
		out = append(out, t.Options[i])
	}
	return out
}

// Table is the options of one system or workload.
type Table[T any] struct {
	// Owner names the system or workload in errors ("redis").
	Owner string
	// Options are the options, in the order they are documented.
	Options []Option[T]
}

// Doc describes one option, for help texts and `locklab systems`.
type Doc struct {
	Name, Doc, Default, Accepts string
}

// Setting is an option's name and its value in textual form.
type Setting struct {
	Name, Value string
}

// Spec is what a registry keeps of a table: the documentation, the effective
// configuration of a set of key=value pairs, and a self-check. Every Table
// is a Spec.
type Spec interface {
	// Names lists the option names, in documentation order.
	Names() []string
	// Docs documents every option.
	Docs() []Doc
	// Effective is every option's value, defaults included, after setting
	// kv; it fails as Parse does.
	Effective(kv map[string]string) ([]Setting, error)
	// Check reports a table that contradicts itself.
	Check() error
}

// Names lists the option names, in documentation order.
func (t Table[T]) Names() []string {
	out := make([]string, len(t.Options))
	for i, o := range t.Options {
		out[i] = o.Name
	}
	return out
}

// Docs documents every option.
func (t Table[T]) Docs() []Doc {
	out := make([]Doc, len(t.Options))
	for i, o := range t.Options {
		out[i] = Doc{Name: o.Name, Doc: o.Doc, Default: o.Default, Accepts: o.Accepts}
	}
	return out
}

// Defaults is T with every option at its declared default. A default that
// does not parse is a bug in the table (Check finds it) and panics.
func (t Table[T]) Defaults() T {
	var o T
	for _, opt := range t.Options {
		if err := opt.set(&o, opt.Default); err != nil {
			panic(fmt.Sprintf("%s option %s: default %q: %v", t.Owner, opt.Name, opt.Default, err))
		}
	}
	return o
}

// Set sets one option of o from its textual form. An unknown key is an error
// that lists the valid ones; a bad value names the key, the value and what
// was wanted.
func (t Table[T]) Set(o *T, key, value string) error {
	for _, opt := range t.Options {
		if opt.Name != key {
			continue
		}
		if err := opt.set(o, value); err != nil {
			return fmt.Errorf("%s option %s=%q: %w", t.Owner, key, value, err)
		}
		return nil
	}
	if len(t.Options) == 0 {
		return fmt.Errorf("%s has no option %q (it has no options)", t.Owner, key)
	}
	if near := suggest.Closest(key, t.Names()); len(near) > 0 {
		return fmt.Errorf("%s has no option %q — did you mean %s? (options: %s)", t.Owner, key, suggest.Either(near), strings.Join(t.Names(), ", "))
	}
	return fmt.Errorf("%s has no option %q (options: %s)", t.Owner, key, strings.Join(t.Names(), ", "))
}

// Parse is the defaults with every pair of kv set, in the order of the keys
// (so the first error is the same on every run).
func (t Table[T]) Parse(kv map[string]string) (T, error) {
	o := t.Defaults()
	keys := make([]string, 0, len(kv))
	for k := range kv { // determinism:ok the keys are sorted below
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := t.Set(&o, k, kv[k]); err != nil {
			return o, err
		}
	}
	return o, nil
}

// Values is every option's value in o, in documentation order.
func (t Table[T]) Values(o T) []Setting {
	out := make([]Setting, len(t.Options))
	for i, opt := range t.Options {
		out[i] = Setting{Name: opt.Name, Value: opt.get(&o)}
	}
	return out
}

// Effective is Values of Parse(kv).
func (t Table[T]) Effective(kv map[string]string) ([]Setting, error) {
	o, err := t.Parse(kv)
	if err != nil {
		return nil, err
	}
	return t.Values(o), nil
}

// Check reports a table that contradicts itself: an option without a name or
// a meaning, a name given twice, or a default that does not parse or is not
// written the way the option prints its value (so the documented default is
// exactly what a run records).
func (t Table[T]) Check() error {
	var errs []error
	seen := map[string]bool{}
	for i, opt := range t.Options {
		switch {
		case opt.Name == "":
			errs = append(errs, fmt.Errorf("%s option #%d has no name", t.Owner, i))
		case seen[opt.Name]:
			errs = append(errs, fmt.Errorf("%s option %s is declared twice", t.Owner, opt.Name))
		case opt.Doc == "" || opt.Accepts == "":
			errs = append(errs, fmt.Errorf("%s option %s says neither what it means nor what it accepts", t.Owner, opt.Name))
		}
		seen[opt.Name] = true
		var o T
		if err := opt.set(&o, opt.Default); err != nil {
			errs = append(errs, fmt.Errorf("%s option %s: default %q: %w", t.Owner, opt.Name, opt.Default, err))
		} else if got := opt.get(&o); got != opt.Default {
			errs = append(errs, fmt.Errorf("%s option %s: default %q reads back as %q", t.Owner, opt.Name, opt.Default, got))
		}
	}
	return errors.Join(errs...)
}
