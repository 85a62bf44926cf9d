package cli

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/workloads"
)

// blocks splits the listing into blocks separated by blank lines, keyed by
// the name that starts each.
func blocks(out string) map[string]string {
	m := map[string]string{}
	for _, b := range strings.Split(out, "\n\n") {
		name, _, _ := strings.Cut(b, " ")
		m[name] = b
	}
	return m
}

// TestSystemsListsEveryOptionFromTheRegistries: every registered system,
// workload and storage mode has its block, and every option its line with
// its default and meaning, in 100 columns.
func TestSystemsListsEveryOptionFromTheRegistries(t *testing.T) {
	code, stdout, stderr := capture(t, "systems")
	require.Equal(t, judge.ExitValid, code, stderr)
	assertFits(t, stdout, termWidth)
	got := blocks(stdout)
	type entry struct {
		name    string
		options opt.Spec
	}
	var all []entry
	for _, s := range system.All() {
		all = append(all, entry{s.Name, s.Options})
	}
	for _, w := range workloads.All() {
		all = append(all, entry{w.Name, w.Options})
	}
	require.Len(t, all, len(system.Names())+len(workloads.Names()))
	for _, e := range all {
		b, ok := got[e.name]
		if !assert.True(t, ok, "no block for %s", e.name) {
			continue
		}
		for _, d := range e.options.Docs() {
			line := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(d.Name) + ` +` + regexp.QuoteMeta(showDefault(d.Default)) +
				` +` + regexp.QuoteMeta(firstWords(d.Doc, 3)))
			assert.Regexp(t, line, b, "%s option %s: name, default and meaning on one line", e.name, d.Name)
		}
	}
	for _, m := range storage.Modes {
		assert.Contains(t, got, string(m.Mode))
	}
	assert.Contains(t, got["control"], "no options")
	assert.Contains(t, got["redis"], "  ttl              10s      the lease each grant carries (SET PX) [a duration > 0]")
}

// TestSystemsListsEachSystemsDesigns: every registered design has its line
// in its system's block, with the flags that run it, each storage mode it
// comes in among them.
func TestSystemsListsEachSystemsDesigns(t *testing.T) {
	code, stdout, stderr := capture(t, "systems")
	require.Equal(t, judge.ExitValid, code, stderr)
	got := blocks(stdout)
	designs := system.Designs()
	require.NotEmpty(t, designs)
	for _, d := range designs {
		b := got[d.System]
		assert.Contains(t, b, "\n  DESIGN: locklab run FLAGS\n", d.System)
		assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(d.Name+":")+`(\n      | )`+regexp.QuoteMeta(designFlags(d))+`$`, b, d.Name)
		for _, m := range d.Modes {
			base, _, _ := strings.Cut(d.Flags(m), " --storage ")
			assert.True(t, strings.HasPrefix(designFlags(d), base+" --storage "), "%s: %s", d.Name, d.Flags(m))
			assert.Contains(t, designFlags(d), string(m.Storage), d.Name)
		}
	}
	assert.NotContains(t, got["control"], "DESIGN", "the control lock is no design")
	assert.Contains(t, got["redis"], "\n  Redis SET NX PX + Lua release: --system redis --storage unfenced\n")
	assert.Contains(t, got["chubby"], "\n  Chubby + sequencer: --system chubby --storage check | fenced [--fence-reads]")
}

func TestSystemsShowsOnlyTheNamedOnes(t *testing.T) {
	code, stdout, _ := capture(t, "systems", "redlock", "stock")
	require.Equal(t, judge.ExitValid, code)
	assert.Contains(t, stdout, "\nredlock ")
	assert.Contains(t, stdout, "\nstock ")
	assert.NotContains(t, stdout, "\nredis ")
	assert.NotContains(t, stdout, "Storage modes")
	code, _, stderr := capture(t, "systems", "mongo")
	assert.Equal(t, judge.ExitUsage, code)
	assert.Contains(t, stderr, `unknown system, workload or storage mode "mongo" (known: chubby, control, `)
}

func TestWrap(t *testing.T) {
	tests := []struct {
		text  string
		width int
		want  []string
	}{
		{"", 20, []string{""}},
		{"a b c", 20, []string{"a b c"}},
		{"aaaa bbbb cccc", 10, []string{"aaaa bbbb", "cccc"}},
		{"x " + strings.Repeat("y", 25), 10, []string{"x", "yyyyyyyyyy", "yyyyyyyyyy", "yyyyy"}},
		{"größer als – das", 10, []string{"größer als", "– das"}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, wrap(tc.text, tc.width), tc.text)
	}
}

// firstWords is the first n words of s.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

// assertFits checks that every line of out has at most width runes.
func assertFits(t *testing.T, out string, width int) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), width, "line %d is too wide: %q", i+1, line)
	}
}
