package sweep

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// variantColumn is the matrix column of a catalog variant's faults: the
// fault kind when every fault of its schedule (or its random nemesis) is of
// one kind, "random" when they are of several; "" when it has none.
func variantColumn(t scenario.Test) string {
	var kinds []string
	if t.Schedule != nil {
		for _, f := range t.Schedule.Faults {
			kinds = append(kinds, string(f.Kind))
		}
	} else {
		switch t.Nemesis {
		case "", "none":
		case "random", "all":
			return "random"
		default:
			ks, err := nemesis.ParseKinds(t.Nemesis)
			if err != nil {
				return ""
			}
			for _, k := range ks {
				kinds = append(kinds, string(k))
			}
		}
	}
	slices.Sort(kinds)
	switch kinds = slices.Compact(kinds); len(kinds) {
	case 0:
		return ""
	case 1:
		return kinds[0]
	}
	return "random"
}

// agreement is one catalog variant against its cell of the default matrix.
type agreement struct {
	variant, row, column string
	// invalid and valid are the safety checks the variant expects INVALID
	// (it is unsafe) and VALID.
	invalid, valid []string
	note           string
}

// agrees reports whether the cell shows what the variant shows, and says
// so in words: an unsafe variant's violation found (a check it expects
// INVALID failed in a run of the cell's search), and no run of the search
// failing a safety check the variant expects VALID (a fixed variant's cell
// without its violation).
func (a agreement) agrees(cell SearchedCell) (bool, string) {
	failed := func(checks []string) []string {
		var out []string
		for _, c := range checks {
			if n := cell.Evidence.Failed[c]; n > 0 {
				out = append(out, fmt.Sprintf("%s failed in %d runs", c, n))
			}
		}
		return out
	}
	var why []string
	ok := true
	if len(a.invalid) > 0 {
		if f := failed(a.invalid); len(f) > 0 {
			why = append(why, "unsafe, found: "+strings.Join(f, ", "))
		} else {
			ok = false
			why = append(why, "unsafe, but no run failed "+strings.Join(a.invalid, " or "))
		}
	}
	if f := failed(a.valid); len(f) > 0 {
		ok = false
		why = append(why, "expects "+strings.Join(a.valid, ", ")+" valid, but "+strings.Join(f, ", "))
	} else if len(a.valid) > 0 {
		why = append(why, "no run failed "+strings.Join(a.valid, ", "))
	}
	return ok, strings.Join(why, "; ") + " [" + cell.Evidence.Line + "]"
}

// TestCatalogAgreesWithTheMatrix: every catalog variant whose design and
// storage mode is a row of the default matrix, and whose faults are of one
// family (or of several: the random column), comes out the same way in that
// cell of the default matrix, computed with exactly its settings: an unsafe
// variant's violation is found there; a fixed variant's cell shows no run
// failing a check the variant expects valid. A disagreement is allowed only
// when the variant explains it (scenario.Variant.MatrixNote), and a note on a
// variant that agrees is stale. -v logs the table.
func TestCatalogAgreesWithTheMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: searches every matrix cell a catalog variant maps to (half a minute on 2 cores)")
	}
	p, err := FindMatrixPreset("matrix")
	require.NoError(t, err)
	c, err := p.Config()
	require.NoError(t, err)
	rows := map[string]SearchedRow{}
	for _, r := range c.Rows {
		rows[r.ID] = r
	}
	var list []agreement
	cells := map[[2]string]*SearchedCell{}
	for _, s := range scenario.Catalog() {
		for _, v := range s.Variants {
			vt := v.Test.WithDefaults()
			id := NewSearchedRow("", Config{System: vt.System, SystemOptions: vt.SystemOptions, Storage: vt.Storage, FenceReads: vt.FenceReads}, "").ID
			row, ok := rows[id]
			col := variantColumn(vt)
			if !ok || col == "" || !slices.Contains(c.Columns, col) {
				continue
			}
			a := agreement{variant: s.Name + "/" + v.Name, row: row.ID, column: col, note: v.MatrixNote}
			for _, check := range slices.Sorted(maps.Keys(v.Expect)) {
				switch {
				case check == livenessCheck:
				case v.Expect[check] == models.Invalid:
					a.invalid = append(a.invalid, check)
				case v.Expect[check] == models.Valid:
					a.valid = append(a.valid, check)
				}
			}
			if len(a.invalid)+len(a.valid) == 0 {
				continue
			}
			list = append(list, a)
			cells[[2]string{row.ID, col}] = nil
		}
	}
	require.NotEmpty(t, list, "no catalog variant is a cell of the default matrix")
	defer TuneGC()()
	var eg errgroup.Group
	eg.SetLimit(runtime.GOMAXPROCS(0))
	var mu sync.Mutex
	for key := range cells {
		eg.Go(func() error {
			cell, _, err := SearchCell(c, rows[key[0]], key[1], CellOptions{NoShrink: true})
			if err != nil {
				return err
			}
			mu.Lock()
			cells[key] = &cell
			mu.Unlock()
			return nil
		})
	}
	require.NoError(t, eg.Wait())
	var table strings.Builder
	for _, a := range list {
		row := rows[a.row]
		ok, why := a.agrees(*cells[[2]string{a.row, a.column}])
		mark := "agrees"
		switch {
		case !ok && a.note != "":
			mark = "differs, explained: " + a.note
		case !ok:
			mark = "DISAGREES"
			t.Errorf("%s -> %s · %s × %s: %s", a.variant, row.Design, row.Storage, a.column, why)
		case a.note != "":
			// A note explains a difference the cell's search may or may not
			// meet within its budget (a violation rarer than 1 in 300 runs):
			// it stays, and the table says the cell agrees this time.
			mark = "agrees (the note explains a difference a search may meet: " + a.note + ")"
		}
		fmt.Fprintf(&table, "%s -> %s · %s × %s: %s (%s)\n", a.variant, row.Design, row.Storage, a.column, mark, why)
	}
	t.Logf("catalog variant -> matrix cell -> agrees (%d variants, %d cells):\n%s", len(list), len(cells), table.String())
	assert.NotEmpty(t, cells)
}
