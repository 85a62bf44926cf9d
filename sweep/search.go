package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/workloads"
)

// Files of a searched matrix's directory.
const (
	// SearchManifestFile holds the matrix's settings and fingerprint.
	SearchManifestFile = "search.json"
	// CellsJournal is the append-only record of finished cells (and rows'
	// costs), one JSON line each, fsync'd as each is written.
	CellsJournal = "cells.jsonl"
	// MatrixText is the plain-text summary of a searched matrix.
	MatrixText = "matrix.txt"
)

// searchManifest is search.json.
type searchManifest struct {
	Format      string       `json:"format"`
	Fingerprint string       `json:"fingerprint"`
	Config      SearchConfig `json:"config"`
}

// ReadSearchConfig reads the settings of the searched matrix in dir (for
// --resume).
func ReadSearchConfig(dir string) (SearchConfig, error) {
	path := filepath.Join(dir, SearchManifestFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return SearchConfig{}, fmt.Errorf("matrix directory: %w", err)
	}
	var m searchManifest
	if err := json.Unmarshal(b, &m); err != nil {
		return SearchConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	if m.Format != searchFormat {
		return SearchConfig{}, fmt.Errorf("%s: format %q, want %q (a matrix of another version: run it afresh in another directory)", path, m.Format, searchFormat)
	}
	if m.Fingerprint != m.Config.Fingerprint() {
		return SearchConfig{}, fmt.Errorf("%s: the fingerprint does not match its settings (edited by hand?)", path)
	}
	return m.Config, nil
}

// journalLine is one line of cells.jsonl: a finished cell, or (Column "")
// a row's cost.
type journalLine struct {
	Row    string `json:"row"`
	Column string `json:"column,omitempty"`
	// Runs counts the simulated runs the item made.
	Runs int           `json:"runs"`
	Cell *SearchedCell `json:"cell,omitempty"`
	Cost *RowCost      `json:"cost,omitempty"`
}

// SearchProgress is told what a searched matrix does.
type SearchProgress interface {
	// Start: cells in all, done of them recorded before.
	Start(cells, done int)
	// Run: a simulated run finished. It may be called from several
	// goroutines at once.
	Run()
	// Cell: a cell finished (called from one goroutine).
	Cell(row SearchedRow, cell SearchedCell)
}

// SearchOptions configure SearchMatrix.
type SearchOptions struct {
	// Dir is the matrix directory.
	Dir string
	// Jobs is the number of cells searched at once. Default GOMAXPROCS.
	Jobs int
	// Progress, when set, is told of every run and cell.
	Progress SearchProgress
	// Stop, when closed, ends the matrix after the cells under way (for
	// tests of resumption); nil: never.
	Stop <-chan struct{}
}

// item is a unit of work: a row's cost (column "") or a cell.
type item struct {
	row    int
	column string
}

// SearchMatrix decides every cell of the matrix that dir's journal does not
// hold yet, on o.Jobs workers, appending each finished cell to the journal
// (fsync'd); then it writes matrix.json and matrix.txt. Every cell is
// deterministic from its row and column, so the matrix is the same for any
// -j and however often it was interrupted and resumed. It holds the
// directory locked (LockDir) while it works.
func SearchMatrix(c SearchConfig, o SearchOptions) (SearchedMatrix, error) {
	if err := c.Validate(); err != nil {
		return SearchedMatrix{}, err
	}
	rowIndex := map[string]int{}
	for i, r := range c.Rows {
		rowIndex[r.ID] = i
	}
	done := map[item]journalLine{}
	var m SearchedMatrix
	err := journaled(o.Dir, func() error { return prepareSearchDir(o.Dir, c) }, CellsJournal, func(line []byte, _ int64) error {
		var l journalLine
		if err := json.Unmarshal(line, &l); err != nil {
			return err
		}
		r, ok := rowIndex[l.Row]
		if !ok || (l.Column != "" && !slices.Contains(c.Columns, l.Column)) || (l.Column != "" && l.Cell == nil) {
			return fmt.Errorf("not a cell of this matrix (row %q, column %q)", l.Row, l.Column)
		}
		it := item{r, l.Column}
		if prev, dup := done[it]; dup {
			a, _ := json.Marshal(prev)
			b, _ := json.Marshal(l)
			if string(a) != string(b) {
				return fmt.Errorf("row %s column %q is recorded twice differently", l.Row, l.Column)
			}
		}
		done[it] = l
		return nil
	}, func(j *journal) error {
		j.syncRecords = 1 // every cell is minutes of work: fsync each
		return searchPending(c, o, done, j)
	}, func() error {
		m = searchedMatrix(c, done)
		return writeSearched(o.Dir, m)
	})
	return m, err
}

// searchPending decides the items done does not hold yet (a row's cost,
// or a cell), appending each to j and to done, and tells o.Progress of
// every cell.
func searchPending(c SearchConfig, o SearchOptions, done map[item]journalLine, j *journal) error {
	var pending []item
	cellsDone := 0
	for r := range c.Rows {
		if _, ok := done[item{r, ""}]; !ok {
			pending = append(pending, item{r, ""})
		}
		for _, col := range c.Columns {
			if _, ok := done[item{r, col}]; ok {
				cellsDone++
			} else {
				pending = append(pending, item{r, col})
			}
		}
	}
	if o.Progress != nil {
		o.Progress.Start(len(c.Rows)*len(c.Columns), cellsDone)
	}
	return searchPool(c, o, pending, func(l journalLine, it item) error {
		if _, err := j.appendJSON(l); err != nil {
			return err
		}
		done[it] = l
		if o.Progress != nil && l.Cell != nil {
			o.Progress.Cell(c.Rows[it.row], *l.Cell)
		}
		return nil
	})
}

// searchedMatrix is the matrix of the journal's lines done: every row's
// cost and cells.
func searchedMatrix(c SearchConfig, done map[item]journalLine) SearchedMatrix {
	m := SearchedMatrix{Preset: c.Preset, Fingerprint: c.Fingerprint(), Columns: c.Columns, Budget: c.Budget, Time: c.Time, Clients: c.Clients}
	for r, row := range c.Rows {
		sh, _ := rowShape(c, row)
		row.Shape = &sh
		cost := done[item{r, ""}]
		row.Cost = cost.Cost
		m.Runs += cost.Runs
		for _, col := range c.Columns {
			l := done[item{r, col}]
			m.Runs += l.Runs
			row.Cells = append(row.Cells, *l.Cell)
			if row.Beyond == nil {
				row.Beyond = l.Cell.Evidence.Beyond
			}
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

// writeSearched writes matrix.json, matrix.txt and the matrix page of m
// into dir.
func writeSearched(dir string, m SearchedMatrix) error {
	if err := writeJSON(filepath.Join(dir, MatrixJSON), m); err != nil {
		return err
	}
	if err := reports.WriteFileAtomic(filepath.Join(dir, MatrixText), func(w io.Writer) error { return WriteSearchedText(w, m, true) }); err != nil {
		return err
	}
	if err := WriteSearchedPage(dir, m); err != nil {
		return fmt.Errorf("matrix page: %w", err)
	}
	return nil
}

// prepareSearchDir creates dir with its manifest, or checks that the
// manifest there is the same matrix (a resume).
func prepareSearchDir(dir string, c SearchConfig) error {
	m := searchManifest{Format: searchFormat, Fingerprint: c.Fingerprint(), Config: c}
	old, err := ReadSearchConfig(dir)
	switch {
	case err == nil:
		if fp := old.Fingerprint(); fp != m.Fingerprint {
			return &GridMismatchError{Dir: dir, Why: "a matrix of other settings (fingerprint " + fp + ", this one " + m.Fingerprint + ")"}
		}
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return &GridMismatchError{Dir: dir, Why: err.Error()}
	}
	if entries, err := os.ReadDir(dir); err == nil && slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() != LockFile }) {
		return &GridMismatchError{Dir: dir, Why: "other files (no " + SearchManifestFile + ")"}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("matrix directory: %w", err)
	}
	return writeJSON(filepath.Join(dir, SearchManifestFile), m)
}

// searchPool works through the pending items on o.Jobs workers and hands
// each finished one to done, from the calling goroutine.
func searchPool(c SearchConfig, o SearchOptions, pending []item, done func(journalLine, item) error) error {
	_, err := pool(pending, o.Jobs, 1, o.Stop,
		func(it item) (journalLine, error) { return searchItem(c, o, it) },
		func(it item, l journalLine) error { return done(l, it) })
	return err
}

// searchItem does one item: a row's cost, or a cell.
func searchItem(c SearchConfig, o SearchOptions, it item) (journalLine, error) {
	row := c.Rows[it.row]
	var run func()
	if o.Progress != nil {
		run = o.Progress.Run
	}
	if it.column == "" {
		cost, runs, err := rowCost(c, row, run)
		return journalLine{Row: row.ID, Runs: runs, Cost: cost}, err
	}
	cell, runs, err := SearchCell(c, row, it.column, CellOptions{Dir: o.Dir, Run: run})
	if err != nil {
		return journalLine{}, err
	}
	return journalLine{Row: row.ID, Column: it.column, Runs: runs, Cell: &cell}, nil
}

// rowCost measures a row on CostRuns fault-free runs (seeds 1..CostRuns):
// the median over runs of each run's acquire latency quantiles, critical
// sections (granted acquires) per simulated second, messages per granted
// acquire, each client's grants, and the largest share one client got in
// any one run; then, for each seed, a failover run on
// the row's run shape: the same run, in which the first client granted the
// lock crashes right after that grant (the run is deterministic, so the
// same client gets it first), timed until another client is granted it.
// nil when no acquire was granted.
func rowCost(c SearchConfig, row SearchedRow, run func()) (*RowCost, int, error) {
	var p50s, p99s []int64
	var failovers []time.Duration
	cost := &RowCost{Grants: make([]int, c.Clients)}
	var messages uint64
	runs := 0
	for seed := range uint64(c.CostRuns) {
		t := c.test(row, "none", seed+1)
		r, err := harness.Run(t)
		if err != nil {
			return nil, 0, fmt.Errorf("%s · %s: cost run: %w", row.Design, row.Storage, err)
		}
		rec := NewRecord("", r)
		runGrants := make([]int, c.Clients)
		first := clientGrants(r.Events, runGrants)
		cost.TopShare = max(cost.TopShare, topShare(runGrants))
		for i, g := range runGrants {
			cost.Grants[i] += g
		}
		r.Release()
		runs++
		if run != nil {
			run()
		}
		messages += rec.Messages
		if rec.AcquiresOK > 0 {
			p50s, p99s = append(p50s, rec.AcquireP50US), append(p99s, rec.AcquireP99US)
		}
		if first == "" {
			continue
		}
		d, never, err := failoverRun(c, row, seed+1, first)
		runs++
		if run != nil {
			run()
		}
		if err != nil {
			return nil, runs, err
		}
		failovers = append(failovers, d)
		if never {
			cost.FailoverNever++
		}
	}
	grants := 0
	for _, g := range cost.Grants {
		grants += g
	}
	if grants == 0 {
		return nil, runs, nil
	}
	// A leader holding the lock for the whole run is what leader election
	// is for: its cost is its failover time, not the others' share.
	w, _ := workloads.Find(c.test(row, "none", 1).Workload)
	cost.Starved = c.Clients > 1 && cost.TopShare > StarveShare && !w.Leadership
	cost.Cost = Cost{AcquireP50MS: median(p50s) / 1000, AcquireP99MS: median(p99s) / 1000,
		CSPerSecond:        float64(grants) / float64(c.CostRuns) / time.Duration(c.Time).Seconds(),
		MessagesPerAcquire: float64(messages) / float64(grants)}
	cost.FailoverRuns = len(failovers)
	if len(failovers) > 0 {
		slices.Sort(failovers)
		cost.FailoverMS = float64(failovers[len(failovers)/2].Microseconds()) / 1000
	}
	return cost, runs, nil
}

// failoverRun runs row's fault-free run of seed on the row's run shape with
// one fault: client crashes right after its first grant, for good. It
// returns the time from the crash to the next grant to another client, and
// whether none came (the time is then the rest of the run).
func failoverRun(c SearchConfig, row SearchedRow, seed uint64, client string) (time.Duration, bool, error) {
	t := c.test(row, "none", seed)
	if sh, err := rowShape(c, row); err == nil {
		t.Time = max(t.Time, time.Duration(sh.Time))
	}
	t.Schedule = &nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Crash, Targets: []string{client},
		After: &nemesis.Trigger{Node: client, F: history.FAcquire}}}}
	r, err := harness.Run(t)
	if err != nil {
		return 0, false, fmt.Errorf("%s · %s: failover run (crash %s after its first grant): %w", row.Design, row.Storage, client, err)
	}
	defer r.Release()
	d, ok := failover(r.Events, client)
	if !ok {
		return 0, false, fmt.Errorf("%s · %s: failover run (crash %s after its first grant): the crash did not fire", row.Design, row.Storage, client)
	}
	if d < 0 {
		return t.Time - failoverStart(r.Events, client), true, nil
	}
	return d, false, nil
}

// clientGrants adds each client's granted acquires in events to grants
// (index 0: c1) and returns the client granted first ("" when none was).
func clientGrants(events []history.Event, grants []int) string {
	first := ""
	for _, e := range events {
		if e.Process == history.NemesisProcess || e.F != history.FAcquire || e.Type != history.OK {
			continue
		}
		if first == "" {
			first = e.Node
		}
		var n int
		if _, err := fmt.Sscanf(e.Node, "c%d", &n); err == nil && n >= 1 && n <= len(grants) {
			grants[n-1]++
		}
	}
	return first
}

// topShare is the largest share of grants one client got (0: no grants).
func topShare(grants []int) float64 {
	total, top := 0, 0
	for _, g := range grants {
		total, top = total+g, max(top, g)
	}
	if total == 0 {
		return 0
	}
	return float64(top) / float64(total)
}

// failoverStart is the time of the crash of client in events (0: none).
func failoverStart(events []history.Event, client string) time.Duration {
	for _, e := range events {
		if e.Process == history.NemesisProcess && e.Type == history.Start && e.F == string(nemesis.Crash) && slices.Contains(e.Targets, client) {
			return time.Duration(e.Time)
		}
	}
	return 0
}

// failover is the time from the crash of client in events to the next
// grant to another client; -1 when none came; false when client never
// crashed.
func failover(events []history.Event, client string) (time.Duration, bool) {
	crashed := false
	var at int64
	for _, e := range events {
		switch {
		case !crashed && e.Process == history.NemesisProcess && e.Type == history.Start && e.F == string(nemesis.Crash) && slices.Contains(e.Targets, client):
			crashed, at = true, e.Time
		case crashed && e.Process != history.NemesisProcess && e.F == history.FAcquire && e.Type == history.OK && e.Node != client:
			return time.Duration(e.Time - at), true
		}
	}
	if !crashed {
		return 0, false
	}
	return -1, true
}

// RowShape is row's run shape in the matrix of c: its runs' length, fitted
// to the timeouts its design declares.
func (c SearchConfig) RowShape(row SearchedRow) Shape {
	sh, _ := rowShape(c, row)
	return sh
}
