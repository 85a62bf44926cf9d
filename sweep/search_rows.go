package sweep

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/guide"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

// SearchConfig is what a searched matrix (`locklab matrix`) runs: every row
// under every column, each cell decided by one guided search of at most
// Budget runs of Time simulated seconds with Clients clients.
type SearchConfig struct {
	// Preset names the rows ("matrix", "full"; "" for rows given otherwise).
	Preset string `json:"preset"`
	// Rows are the designs in their storage modes (without cells or cost).
	Rows []SearchedRow `json:"rows"`
	// Columns are fault families (SearchColumns).
	Columns []string `json:"columns"`
	// Budget is the most runs a cell's guided search makes.
	Budget int `json:"budget"`
	// Pairs is how many pairs of the cell's single-fault placements its
	// systematic search runs after the singles (drawn from the cell's
	// seed; 0: none).
	Pairs int `json:"pairs,omitempty"`
	// Time is the simulated length of each run; Clients its clients.
	Time    Duration `json:"time"`
	Clients int      `json:"clients"`
	// CostRuns is the number of fault-free runs a row's cost is measured on.
	CostRuns int `json:"cost_runs"`
	// ShrinkRuns bounds the runs shrinking one finding makes.
	ShrinkRuns int `json:"shrink_runs"`
}

// searchFormat names the format of a searched matrix's directory (its
// manifest and journal) and of the search itself: a change to either that
// changes what a cell records changes it, so that a resume never mixes
// cells of two versions.
const searchFormat = "locklab-matrix/2"

// SearchColumns are the fault families of a searched matrix, in order: each
// fault kind alone, then every kind at once (swarm style).
func SearchColumns() []string { return guide.Families() }

// MatrixPreset is a named searched matrix: its rows and its settings.
type MatrixPreset struct {
	// Name is the --preset name; Doc says what it is in one line.
	Name, Doc string
	// Budget, Pairs, Time, Clients, CostRuns and ShrinkRuns are the
	// settings (SearchConfig).
	Budget     int
	Pairs      int
	Time       time.Duration
	Clients    int
	CostRuns   int
	ShrinkRuns int
	// rows builds the rows.
	rows func() ([]SearchedRow, error)
}

// The default matrix's settings, sized from the per-run cost on two cores
// (BenchmarkRunCost: a 20 s run with two clients costs ~0.8 ms for redis,
// ~1 ms for the database, ~3-5 ms for raftkv, ZooKeeper and etcd, ~11 ms
// for Chubby). Two clients are all a lock needs to break (a holder and one
// more); 20 s is the shortest run, each row's runs are as long as its
// timeouts need (rowShape: Chubby's lease + lock-delay, a drift past a
// TTL); each cell first runs its family's systematic placements (about
// 50-500 a cell) and 20 pairs of them, then 300 guided runs for the
// multi-fault interactions nobody enumerated (with 100, the default matrix
// missed six corruptions that random draws meet in about 1% of runs:
// Redis + INCR tokens under crashes, Redlock + counter under clock jumps,
// etcd + revision fencing under partitions); and the search of a cell stops
// at its first corruption.
const (
	defaultBudget     = 300
	defaultPairs      = 20
	defaultTime       = 20 * time.Second
	defaultClients    = 2
	defaultCostRuns   = 3
	defaultShrinkRuns = 150
)

// MatrixPresets are the presets of `locklab matrix --preset`, the default
// first.
func MatrixPresets() []MatrixPreset {
	return []MatrixPreset{
		{Name: "matrix", Doc: "every design people choose between (each system registers its own), in each storage mode it is offered in",
			Budget: defaultBudget, Pairs: defaultPairs, Time: defaultTime, Clients: defaultClients, CostRuns: defaultCostRuns, ShrinkRuns: defaultShrinkRuns,
			rows: DesignRows},
		{Name: "full", Doc: "every option variant of the catalog's designs, in every storage mode it supports",
			Budget: defaultBudget, Pairs: defaultPairs, Time: defaultTime, Clients: defaultClients, CostRuns: defaultCostRuns, ShrinkRuns: defaultShrinkRuns,
			rows: FullRows},
	}
}

// FindMatrixPreset returns the preset called name.
func FindMatrixPreset(name string) (MatrixPreset, error) {
	var names []string
	for _, p := range MatrixPresets() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return MatrixPreset{}, fmt.Errorf("unknown preset %q (known: %s)", name, strings.Join(names, ", "))
}

// Config is the preset's searched matrix: its rows and settings, every
// column.
func (p MatrixPreset) Config() (SearchConfig, error) {
	rows, err := p.rows()
	if err != nil {
		return SearchConfig{}, fmt.Errorf("preset %s: %w", p.Name, err)
	}
	return SearchConfig{Preset: p.Name, Rows: rows, Columns: SearchColumns(), Budget: p.Budget, Pairs: p.Pairs, Time: Duration(p.Time),
		Clients: p.Clients, CostRuns: p.CostRuns, ShrinkRuns: p.ShrinkRuns}, nil
}

// DesignRows are the default matrix's rows: every registered design
// (system.Designs) in each of its modes, named as its users name it, with
// the mode's guard.
func DesignRows() ([]SearchedRow, error) {
	var rows []SearchedRow
	seen := map[string]string{}
	for _, d := range system.Designs() {
		for _, m := range d.Modes {
			r := NewSearchedRow(d.Name, Config{System: d.System, SystemOptions: d.SystemOptions, Storage: m.Storage, FenceReads: m.FenceReads}, m.Guard)
			r.NoLock = d.NoLock
			if other, dup := seen[r.ID]; dup {
				return nil, fmt.Errorf("designs %q and %q are the same row (%s)", other, d.Name, r.Flags)
			}
			seen[r.ID] = d.Name
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil, errors.New("no system registers a design")
	}
	return rows, nil
}

// FullRows are the full matrix's rows: every option variant of the random
// sweep's catalog rows (CatalogRows), each named by its registered design
// when it is one, else by its system and options, with its guard.
func FullRows() ([]SearchedRow, error) {
	catalog, err := CatalogRows()
	if err != nil {
		return nil, err
	}
	names := map[string]string{} // design row id -> design name
	for _, d := range system.Designs() {
		for _, m := range d.Modes {
			r := NewSearchedRow(d.Name, Config{System: d.System, SystemOptions: d.SystemOptions, Storage: m.Storage, FenceReads: m.FenceReads}, m.Guard)
			names[r.ID] = d.Name
		}
	}
	var rows []SearchedRow
	for _, c := range catalog {
		cfg := Config{System: c.Config.System, SystemOptions: c.Config.SystemOptions, Storage: c.Config.Storage, FenceReads: c.Config.FenceReads}
		r := NewSearchedRow(c.Design, cfg, guardOf(cfg))
		if n, ok := names[r.ID]; ok {
			r.Design = n
		}
		r.NoLock = noLock(cfg)
		rows = append(rows, r)
	}
	return rows, nil
}

// noLock reports whether a row is a design without a lock (system.Design
// NoLock): a registered lockless design of its system whose options it
// sets too (database mode=optimistic, whatever else it sets).
func noLock(c Config) bool {
	for _, d := range system.Designs() {
		if !d.NoLock || d.System != c.System {
			continue
		}
		all := true
		for k, v := range d.SystemOptions {
			all = all && c.SystemOptions[k] == v
		}
		if all {
			return true
		}
	}
	return false
}

// guardOf names what keeps a row's data safe when its lock breaks
// (system.GuardOf: the design's own guard, else the system's and the
// storage mode's).
func guardOf(c Config) string {
	return system.GuardOf(c.System, c.SystemOptions, c.Storage, c.FenceReads)
}

// NewSearchedRow is the row of a design in one storage mode: its options
// left at their defaults dropped, its id a short hash of the configuration,
// its flags those of `locklab run`. The row runs its system's row workload
// (system.RowWorkload: the default workload for most); the matrix sets the
// clients, the faults, the seed and the time.
func NewSearchedRow(design string, c Config, guard string) SearchedRow {
	c = Config{System: c.System, SystemOptions: scenario.NonDefault(c.SystemOptions, scenario.SystemOptionTable(c.System)),
		Workload: system.RowWorkload(c.System), Storage: c.Storage, FenceReads: c.FenceReads}
	if c.Storage == "" {
		c.Storage = storage.Unfenced
	}
	if len(c.SystemOptions) == 0 {
		c.SystemOptions = nil
	}
	mode := system.DesignMode{Storage: c.Storage, FenceReads: c.FenceReads}
	flags := system.Design{System: c.System, SystemOptions: c.SystemOptions}.Flags(mode)
	if c.Workload != "" {
		flags += " --workload " + c.Workload
	}
	return SearchedRow{ID: digest("configuration", c, 5), Design: design, System: c.System, Storage: mode.StorageName(), Guard: guard,
		Config: c, Flags: flags}
}

// Fingerprint identifies the matrix's settings and rows: a resume refuses a
// directory of another fingerprint.
func (c SearchConfig) Fingerprint() string {
	return digest("search configuration", struct {
		Format string       `json:"format"`
		Config SearchConfig `json:"config"`
	}{searchFormat, c}, 8)
}

// Validate checks the settings and that every row's test can be prepared,
// naming what is wrong.
func (c SearchConfig) Validate() error {
	if err := checkColumns("matrix", len(c.Rows), c.Columns, SearchColumns()); err != nil {
		return err
	}
	if c.Budget < 1 {
		return fmt.Errorf("budget: %d runs per cell, want at least 1", c.Budget)
	}
	if c.Pairs < 0 {
		return fmt.Errorf("pairs: %d per cell, want 0 or more", c.Pairs)
	}
	if c.Time <= 0 {
		return fmt.Errorf("time: must be positive, got %v", time.Duration(c.Time))
	}
	if c.Clients < 1 {
		return fmt.Errorf("clients: %d, want at least 1", c.Clients)
	}
	if c.CostRuns < 1 {
		return fmt.Errorf("cost runs: %d, want at least 1", c.CostRuns)
	}
	if c.ShrinkRuns < 1 {
		return fmt.Errorf("shrink runs: %d, want at least 1", c.ShrinkRuns)
	}
	ids := map[string]int{}
	for i, row := range c.Rows {
		if j, dup := ids[row.ID]; dup {
			return fmt.Errorf("rows[%d] (%s) is the same row as rows[%d]", i, row.Flags, j)
		}
		ids[row.ID] = i
		p, err := harness.Prepare(c.test(row, "none", 1))
		if err != nil {
			return fmt.Errorf("rows[%d] (%s · %s): %w", i, row.Design, row.Storage, err)
		}
		p.World.Close()
	}
	return nil
}

// test is a row's run under a fault family's random nemesis ("none": no
// faults) from seed. Checks stop after a number of steps, never after a
// wall-clock time: a verdict must not depend on the machine or on -j.
func (c SearchConfig) test(row SearchedRow, family string, seed uint64) scenario.Test {
	t := row.Config.Test()
	t.Clients, t.Time, t.Nemesis, t.Seed = c.Clients, time.Duration(c.Time), family, seed
	if row.NoLock {
		t.Checks = slices.Clone(system.DataChecks)
	}
	t.CheckBudget, t.CheckSteps = scenario.Unbounded, 0
	return t.WithDefaults()
}

// Only keeps the rows of the given systems; an empty list keeps every row.
func (c SearchConfig) Only(systems []string) (SearchConfig, error) {
	if len(systems) == 0 {
		return c, nil
	}
	var keep []SearchedRow
	for _, r := range c.Rows {
		if slices.Contains(systems, r.System) {
			keep = append(keep, r)
		}
	}
	if len(keep) == 0 {
		return c, fmt.Errorf("no row of the matrix runs %s", strings.Join(systems, ","))
	}
	c.Rows = keep
	return c, nil
}
