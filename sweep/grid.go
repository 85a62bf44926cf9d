package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/internal/suggest"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

// Columns are the fault families, in matrix order: no faults, each fault kind
// of the random nemesis alone, then every kind at once (swarm style).
func Columns() []string {
	out := []string{"none"}
	for _, k := range nemesis.Kinds {
		out = append(out, string(k))
	}
	return append(out, "random")
}

// Row is one design under test: a system with its options, a workload, a
// client count and a storage mode.
type Row struct {
	// ID is a short hash of the row's configuration (see Key).
	ID string `json:"id"`
	// Name is how the matrix labels the row.
	Name string `json:"name"`
	// Design names the lock design without the storage mode (system and
	// options, workload and clients when not the default): rows of one design
	// differ only in their storage.
	Design string `json:"design"`
	// Storage is "unfenced", "fenced" or "fenced+reads".
	Storage string `json:"storage"`
	// Config is the design's configuration.
	Config Config `json:"config"`
}

// Config is what a row fixes of a run: the sweep adds the fault family, the
// seed, the time and the check budgets. A grid file's rows are Configs.
type Config struct {
	System          string            `json:"system"`
	SystemOptions   map[string]string `json:"system_options,omitempty"`
	Workload        string            `json:"workload,omitempty"`
	WorkloadOptions map[string]string `json:"workload_options,omitempty"`
	Clients         int               `json:"clients,omitempty"`
	Storage         storage.Mode      `json:"storage,omitempty"`
	FenceReads      bool              `json:"fence_reads,omitempty"`
}

// Test is the harness test of the configuration, defaults filled in.
func (c Config) Test() scenario.Test {
	return scenario.Test{System: c.System, SystemOptions: c.SystemOptions, Workload: c.Workload,
		WorkloadOptions: c.WorkloadOptions, Clients: c.Clients, Storage: c.Storage, FenceReads: c.FenceReads}.WithDefaults()
}

// Grid is what a sweep runs: every row under every column for every seed.
type Grid struct {
	// Rows are the designs.
	Rows []Row `json:"rows"`
	// Columns are fault families (see Columns).
	Columns []string `json:"columns"`
	// FirstSeed and Seeds: the seeds FirstSeed .. FirstSeed+Seeds-1.
	FirstSeed uint64 `json:"first_seed"`
	Seeds     int    `json:"seeds"`
	// Time is the simulated duration of each run.
	Time Duration `json:"time"`
}

// Duration reads and writes JSON as "10s".
type Duration time.Duration

// MarshalJSON writes the duration as a string such as "10s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a string such as "10s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string such as \"10s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Run is one cell-seed of a grid.
type Run struct {
	// Index is the run's position in the grid's stable order.
	Index int
	// ID is "rowID/column/seed".
	ID     string
	Row    int
	Column string
	Seed   uint64
}

// NumRuns is the number of runs of the grid.
func (g Grid) NumRuns() int { return len(g.Rows) * len(g.Columns) * g.Seeds }

// RunAt is the run at index i of the grid's stable order: rows, then
// columns, then seeds.
func (g Grid) RunAt(i int) Run {
	s := i % g.Seeds
	c := (i / g.Seeds) % len(g.Columns)
	r := i / g.Seeds / len(g.Columns)
	seed := g.FirstSeed + uint64(s)
	return Run{Index: i, ID: fmt.Sprintf("%s/%s/%d", g.Rows[r].ID, g.Columns[c], seed), Row: r, Column: g.Columns[c], Seed: seed}
}

// IndexOf is the index of the run called id, false when the grid has none.
func (g Grid) IndexOf(id string) (int, bool) {
	rowID, rest, ok1 := strings.Cut(id, "/")
	col, seedText, ok2 := strings.Cut(rest, "/")
	seed, err := strconv.ParseUint(seedText, 10, 64)
	if !ok1 || !ok2 || err != nil || seed < g.FirstSeed || seed-g.FirstSeed >= uint64(g.Seeds) {
		return 0, false
	}
	r := slices.IndexFunc(g.Rows, func(row Row) bool { return row.ID == rowID })
	c := slices.Index(g.Columns, col)
	if r < 0 || c < 0 {
		return 0, false
	}
	return (r*len(g.Columns)+c)*g.Seeds + int(seed-g.FirstSeed), true
}

// Test is the harness test of a run.
func (g Grid) Test(r Run) scenario.Test {
	t := g.Rows[r.Row].Config.Test()
	t.Nemesis, t.Seed, t.Time = r.Column, r.Seed, time.Duration(g.Time)
	// Search checks stop after a number of steps, never after a wall-clock
	// time: a verdict must not depend on the machine or on -j.
	t.CheckBudget, t.CheckSteps = scenario.Unbounded, 0
	return t.WithDefaults()
}

// Fingerprint is a hash of the grid: sweeps, shards and resumes of one grid
// share it, and merge refuses directories whose fingerprints differ.
func (g Grid) Fingerprint() string { return digest("grid", g, 8) }

// digest is the hex of the first n bytes of the SHA-256 of v's JSON: the
// fingerprints of grids and matrices (8 bytes) and the ids of their rows (5
// bytes). v is one of this package's own types, what names it: one that does
// not marshal is a bug.
func digest(what string, v any, n int) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("sweep: %s does not marshal: %v", what, err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:n])
}

// checkColumns checks what a grid or a matrix (what) has in common: some
// rows, and columns that are all fault families of known.
func checkColumns(what string, rows int, columns, known []string) error {
	if rows == 0 {
		return fmt.Errorf("rows: the %s has no rows", what)
	}
	if len(columns) == 0 {
		return fmt.Errorf("columns: the %s has no columns", what)
	}
	for _, c := range columns {
		if !slices.Contains(known, c) {
			return fmt.Errorf("columns: %w", suggest.Unknown("fault family", c, known))
		}
	}
	return nil
}

// Validate checks the grid: its columns, seeds and time, and that every row's
// test can be prepared (the system, the workload and their options exist,
// fenced storage only with tokens), naming the row.
func (g Grid) Validate() error {
	if err := checkColumns("grid", len(g.Rows), g.Columns, Columns()); err != nil {
		return err
	}
	if g.Seeds < 1 {
		return fmt.Errorf("seeds: %d, want at least 1", g.Seeds)
	}
	if g.FirstSeed+uint64(g.Seeds-1) < g.FirstSeed {
		return fmt.Errorf("first_seed %d and seeds %d: the last seed is beyond %d", g.FirstSeed, g.Seeds, uint64(math.MaxUint64))
	}
	if g.Time <= 0 {
		return fmt.Errorf("time: must be positive, got %v", time.Duration(g.Time))
	}
	ids := map[string]int{}
	for i, row := range g.Rows {
		if j, dup := ids[row.ID]; dup {
			return fmt.Errorf("rows[%d] (%s) is the same design as rows[%d]", i, row.Name, j)
		}
		ids[row.ID] = i
		p, err := harness.Prepare(g.Test(Run{Row: i, Column: "none", Seed: g.FirstSeed}))
		if err != nil {
			return fmt.Errorf("rows[%d] (%s): %w", i, row.Name, err)
		}
		p.World.Close()
	}
	return nil
}

// NewRow makes the row of a configuration, naming it and computing its id
// from the configuration with its defaults filled in.
func NewRow(c Config) Row {
	t := c.Test()
	c = Config{System: t.System, SystemOptions: t.SystemOptions, Workload: t.Workload, WorkloadOptions: t.WorkloadOptions,
		Clients: t.Clients, Storage: t.Storage, FenceReads: t.FenceReads}
	if len(c.SystemOptions) == 0 {
		c.SystemOptions = nil
	}
	if len(c.WorkloadOptions) == 0 {
		c.WorkloadOptions = nil
	}
	storageName := system.DesignMode{Storage: c.Storage, FenceReads: c.FenceReads}.StorageName()
	design := c.System
	for _, k := range slices.Sorted(maps.Keys(c.SystemOptions)) {
		design += " " + k + "=" + c.SystemOptions[k]
	}
	def := scenario.Test{}.WithDefaults()
	if c.Workload != def.Workload || len(c.WorkloadOptions) > 0 {
		design += " · " + c.Workload
		for _, k := range slices.Sorted(maps.Keys(c.WorkloadOptions)) {
			design += " " + k + "=" + c.WorkloadOptions[k]
		}
	}
	if c.Clients != def.Clients {
		design += fmt.Sprintf(" · %d clients", c.Clients)
	}
	return Row{ID: digest("configuration", c, 5), Name: design + " · " + storageName, Design: design, Storage: storageName, Config: c}
}

// CatalogRows are the default rows: every registered system with its default
// options, then every distinct design among the catalog's variants, in
// catalog order, each in every storage mode it supports — unfenced, and
// fenced and fenced+reads when its grants carry fencing tokens. A design is a
// system and the options a variant sets to other than their defaults; the
// variant's workload, clients and schedule stage its scenario and are not
// part of the design (every row runs the default clients and its system's
// row workload, system.RowWorkload: the default workload for most).
func CatalogRows() ([]Row, error) {
	var designs []Config
	for _, s := range system.All() {
		designs = append(designs, Config{System: s.Name, Workload: s.Workload})
	}
	for _, sc := range scenario.Catalog() {
		for _, v := range sc.Variants {
			designs = append(designs, Config{System: v.Test.System, SystemOptions: v.Test.SystemOptions,
				Workload: system.RowWorkload(v.Test.System)})
		}
	}
	var rows []Row
	seen := map[string]bool{}
	for _, d := range designs {
		d.Storage, d.FenceReads = storage.Unfenced, false
		d.SystemOptions = scenario.NonDefault(d.SystemOptions, scenario.SystemOptionTable(d.System))
		base := NewRow(d)
		if seen[base.ID] {
			continue
		}
		seen[base.ID] = true
		modes, err := everyMode(d)
		if err != nil {
			return nil, fmt.Errorf("design %s: %w", base.Design, err)
		}
		rows = append(rows, modes...)
	}
	return rows, nil
}

// hasTokens reports whether the design's grants carry fencing tokens.
func hasTokens(c Config) (bool, error) {
	t := c.Test()
	t.Time = time.Second
	p, err := harness.Prepare(t)
	if err != nil {
		return false, err
	}
	p.World.Close()
	return p.Deployment.HasTokens, nil
}

// GridFile is the JSON a user writes to describe a grid: rows as Configs (each
// without a storage field runs in every storage mode the design supports;
// "rows" left out: the catalog's rows), columns (left out: every fault
// family), seeds and time.
//
//	{
//	  "rows": [
//	    {"system": "redis", "system_options": {"fencing": "true"}, "storage": "fenced", "fence_reads": true},
//	    {"system": "raftkv", "workload": "fenced-counter", "clients": 3}
//	  ],
//	  "columns": ["none", "pause", "random"],
//	  "seeds": 20, "first_seed": 1, "time": "30s"
//	}
type GridFile struct {
	Rows      []Config  `json:"rows"`
	Columns   []string  `json:"columns"`
	Seeds     *int      `json:"seeds"`
	FirstSeed *uint64   `json:"first_seed"`
	Time      *Duration `json:"time"`
}

// ReadGridFile reads a grid file; fields it leaves out keep def's values.
// A field given is used as given: "first_seed": 0 starts at seed 0, and
// "seeds": 0 is refused, naming the file and the field.
func ReadGridFile(path string, def Grid) (Grid, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Grid{}, fmt.Errorf("grid file: %w", err)
	}
	var f GridFile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Grid{}, fmt.Errorf("grid file %s: %w", path, err)
	}
	g := def
	if f.Rows != nil {
		g.Rows = nil
		for i, t := range f.Rows {
			rows, err := rowsOf(t)
			if err != nil {
				return Grid{}, fmt.Errorf("grid file %s: rows[%d]: %w", path, i, err)
			}
			g.Rows = append(g.Rows, rows...)
		}
	}
	if f.Columns != nil {
		g.Columns = f.Columns
	}
	if f.Seeds != nil {
		g.Seeds = *f.Seeds
	}
	if f.FirstSeed != nil {
		g.FirstSeed = *f.FirstSeed
	}
	if f.Time != nil {
		g.Time = *f.Time
	}
	if err := g.Validate(); err != nil {
		return Grid{}, fmt.Errorf("grid file %s: %w", path, err)
	}
	return g, nil
}

// rowsOf is the row of a test that names its storage, or its rows in every
// storage mode its design supports.
func rowsOf(t Config) ([]Row, error) {
	if t.Storage != "" {
		return []Row{NewRow(t)}, nil
	}
	return everyMode(t)
}

// everyMode is a design's rows in every storage mode it supports: unfenced,
// and fenced and fenced+reads when its grants carry fencing tokens.
func everyMode(t Config) ([]Row, error) {
	t.Storage, t.FenceReads = storage.Unfenced, false
	tokens, err := hasTokens(t)
	if err != nil {
		return nil, err
	}
	rows := []Row{NewRow(t)}
	if tokens {
		t.Storage = storage.Fenced
		rows = append(rows, NewRow(t))
		t.FenceReads = true
		rows = append(rows, NewRow(t))
	}
	return rows, nil
}
