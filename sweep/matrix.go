package sweep

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/system"
)

// Cell states, worst first.
const (
	// StateCorrupted: a critical section was not atomic in some seed: the
	// protected data was corrupted.
	StateCorrupted = "corrupted"
	// StateLockBroke: the lock broke (overlapping holders, a broken lease or
	// token order, a broken system invariant) in some seed, but every
	// critical section stayed atomic: the row's guard saved the data
	// (system.GuardOf: fencing tokens checked by the storage, the database
	// transaction, a compare-and-set, etcd's guarded Txn), or, in a row with
	// none, no seed happened to corrupt it.
	StateLockBroke = "lock-broke"
	// StateUnknown: no violation, but a check could not decide in some seed.
	StateUnknown = "unknown"
	// StateUnavailable: no violation, but the lock was not available: fewer
	// than half the acquires succeeded, or none at all.
	StateUnavailable = "unavailable"
	// StateSafe: every check valid in every seed, and the lock available.
	// Printed as "no violation in N seeds", never as "safe": a few random
	// seeds prove nothing (locklab matrix searches each cell instead).
	StateSafe = "no-violation"
)

// dataCheck is the check whose failure means the data was corrupted.
const dataCheck = "critical-sections"

// availableShare is the share of granted acquires below which a cell is
// unavailable.
const availableShare = 0.5

// Cell is one row under one fault family, over the seeds.
type Cell struct {
	Column string `json:"column"`
	State  string `json:"state"`
	// Seeds is the number of seeds recorded; Violated, Corrupted, LockBroke
	// and Unknown count the seeds with a safety violation, with corrupted
	// data, with a broken lock but intact data, and undecided.
	Seeds     int `json:"seeds"`
	Violated  int `json:"violated"`
	Corrupted int `json:"corrupted"`
	LockBroke int `json:"lock_broke"`
	Unknown   int `json:"unknown"`
	// Crashed counts the seeds on which the harness crashed.
	Crashed int `json:"crashed,omitempty"`
	// NoFault counts the seeds of a fault family in which no fault fired
	// (the random nemesis drew none, or none took effect): they tested the
	// design without faults and are evidence of nothing about the family.
	// Evidence says so in words ("1 of 2 seeds fired no fault"; "" when
	// every seed fired some).
	NoFault  int    `json:"no_fault,omitempty"`
	Evidence string `json:"evidence,omitempty"`
	// LivenessFailed counts the seeds whose liveness check failed.
	LivenessFailed int `json:"liveness_failed"`
	// FailingChecks counts, per check, the seeds it was invalid on.
	FailingChecks map[string]int `json:"failing_checks,omitempty"`
	// AcquireSuccess is the share of acquires granted, over every seed (-1:
	// no attempts).
	AcquireSuccess float64 `json:"acquire_success"`
	// StallMaxMS is the longest stall of any seed.
	StallMaxMS float64 `json:"stall_max_ms"`
	// First is the first (lowest) failing seed: a safety violation, else an
	// undecided check.
	First *Failure `json:"first,omitempty"`
}

// Failure is a cell's first failing seed.
type Failure struct {
	Seed   uint64 `json:"seed"`
	Reason string `json:"reason"`
	// Replay is the command that replays it; Dir its run directory,
	// relative to the sweep directory (kept with --keep failures or all).
	Replay string `json:"replay"`
	Dir    string `json:"dir"`
}

// Cost is a row's cost on the no-fault baseline (the "none" column).
type Cost struct {
	// AcquireP50MS and AcquireP99MS: the median over seeds of each run's
	// acquire latency quantile.
	AcquireP50MS float64 `json:"acquire_p50_ms"`
	AcquireP99MS float64 `json:"acquire_p99_ms"`
	// CSPerSecond: critical sections (granted acquires) per simulated second.
	CSPerSecond float64 `json:"cs_per_second"`
	// MessagesPerAcquire: messages the network carried per granted acquire.
	MessagesPerAcquire float64 `json:"messages_per_acquire"`
}

// MatrixRow is one design in one storage mode.
type MatrixRow struct {
	Row   Row    `json:"row"`
	Cells []Cell `json:"cells"`
	// Cost is nil when the grid has no "none" column.
	Cost *Cost `json:"cost,omitempty"`
	// Worst is the largest share of seeds violated in any column, and
	// WorstColumn that column ("" when none).
	Worst       float64 `json:"worst"`
	WorstColumn string  `json:"worst_column,omitempty"`
}

// Matrix is the safety matrix of a sweep.
type Matrix struct {
	Fingerprint string      `json:"fingerprint"`
	Columns     []string    `json:"columns"`
	FirstSeed   uint64      `json:"first_seed"`
	Seeds       int         `json:"seeds"`
	Time        Duration    `json:"time"`
	Runs        int         `json:"runs"`
	Rows        []MatrixRow `json:"rows"`
	// Verdicts say in one line per design what the matrix shows.
	Verdicts []string `json:"verdicts"`
}

// cellAcc accumulates a cell's records.
type cellAcc struct {
	cell             Cell
	attempts, grants int
	p50s, p99s       []int64
	messages         uint64
	// firstViolation and firstUndecided are the lowest seeds of each.
	firstViolation, firstUndecided *Failure
}

func (a *cellAcc) add(g Grid, r Run, rec Record) {
	c := &a.cell
	c.Seeds++
	a.attempts += rec.Acquires
	a.grants += rec.AcquiresOK
	a.messages += rec.Messages
	if rec.AcquiresOK > 0 {
		a.p50s = append(a.p50s, rec.AcquireP50US)
		a.p99s = append(a.p99s, rec.AcquireP99US)
	}
	c.StallMaxMS = max(c.StallMaxMS, rec.StallMaxMS)
	if rec.Crash != "" {
		c.Crashed++
	}
	if rec.Liveness == models.Invalid {
		c.LivenessFailed++
	}
	if rec.NoFault {
		c.NoFault++
	}
	undecided := rec.Crash != ""
	for check, res := range rec.Checks {
		switch res {
		case models.Invalid:
			if c.FailingChecks == nil {
				c.FailingChecks = map[string]int{}
			}
			c.FailingChecks[check]++
		case models.Unknown:
			undecided = true
		}
	}
	violated := true
	switch {
	case rec.Checks[dataCheck] == models.Invalid:
		c.Violated++
		c.Corrupted++
	case rec.Violated():
		c.Violated++
		c.LockBroke++
	case undecided:
		c.Unknown++
		violated = false
	default:
		return
	}
	// The first failing seed: the lowest violated one, else the lowest
	// undecided one. Records arrive in seed order.
	first := &a.firstUndecided
	if violated {
		first = &a.firstViolation
	}
	if *first == nil {
		dir := RunDir(g, r)
		*first = &Failure{Seed: r.Seed, Reason: cmpOr(rec.Crash, rec.Reason), Replay: ReplayCommand(g.Test(r), dir), Dir: dir}
	}
}

func (a *cellAcc) finish() Cell {
	c := a.cell
	c.First = a.firstViolation
	if c.First == nil {
		c.First = a.firstUndecided
	}
	if c.NoFault > 0 {
		c.Evidence = fmt.Sprintf("%d of %d seeds fired no fault", c.NoFault, c.Seeds)
	}
	c.AcquireSuccess = -1
	if a.attempts > 0 {
		c.AcquireSuccess = float64(a.grants) / float64(a.attempts)
	}
	switch {
	case c.Corrupted > 0:
		c.State = StateCorrupted
	case c.LockBroke > 0:
		c.State = StateLockBroke
	case c.Unknown > 0:
		c.State = StateUnknown
	case a.grants == 0 || c.AcquireSuccess < availableShare:
		c.State = StateUnavailable
	default:
		c.State = StateSafe
	}
	return c
}

// savedBy says what kept a row's data when its lock broke: its guard (see
// system.GuardOf), or, when nothing but the lock guards it, that no seed
// happened to corrupt it. An unfenced row's guard never says fencing.
func savedBy(guard string) string {
	if guard == "" {
		return " (data intact, though nothing but the lock guards it: no seed happened to corrupt it)"
	}
	return " (what saved the data: " + guard + ")"
}

func median(xs []int64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return float64(s[len(s)/2])
	}
	return float64(s[len(s)/2-1]+s[len(s)/2]) / 2
}

// BuildMatrix reads a sweep directory's records.jsonl and builds its matrix.
func BuildMatrix(dir string) (Matrix, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return Matrix{}, err
	}
	g := m.Grid
	f, err := os.Open(filepath.Join(dir, RecordsFile))
	if err != nil {
		return Matrix{}, fmt.Errorf("sweep directory: %w", err)
	}
	defer f.Close()
	accs := make([]cellAcc, len(g.Rows)*len(g.Columns))
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	runs := 0
	for sc.Scan() {
		i, rec, err := parseRecord(g, sc.Bytes())
		if err != nil {
			return Matrix{}, fmt.Errorf("%s line %d: %w", filepath.Join(dir, RecordsFile), runs+1, err)
		}
		accs[i/g.Seeds].add(g, g.RunAt(i), rec)
		runs++
	}
	if err := sc.Err(); err != nil {
		return Matrix{}, fmt.Errorf("%s: %w", RecordsFile, err)
	}
	mx := Matrix{Fingerprint: m.Fingerprint, Columns: g.Columns, FirstSeed: g.FirstSeed, Seeds: g.Seeds, Time: g.Time, Runs: runs}
	for r, row := range g.Rows {
		mr := MatrixRow{Row: row}
		for c, col := range g.Columns {
			a := &accs[r*len(g.Columns)+c]
			cell := a.finish()
			cell.Column = col
			mr.Cells = append(mr.Cells, cell)
			if cell.Seeds > 0 {
				if share := float64(cell.Violated) / float64(cell.Seeds); share > mr.Worst {
					mr.Worst, mr.WorstColumn = share, col
				}
			}
			if col == "none" && a.grants > 0 {
				mr.Cost = &Cost{AcquireP50MS: median(a.p50s) / 1000, AcquireP99MS: median(a.p99s) / 1000,
					CSPerSecond:        float64(a.grants) / float64(cell.Seeds) / time.Duration(g.Time).Seconds(),
					MessagesPerAcquire: float64(a.messages) / float64(a.grants)}
			}
		}
		mx.Rows = append(mx.Rows, mr)
	}
	mx.Verdicts = verdicts(mx)
	return mx, nil
}

// verdicts are one line per design: its storage modes and where each breaks.
func verdicts(mx Matrix) []string {
	under := func(cols []string) string {
		if len(cols) == len(mx.Columns) && len(cols) > 1 {
			if slices.Contains(cols, "none") {
				return "in every column, even without faults"
			}
			return "under every fault family tried"
		}
		return "under " + strings.Join(cols, ", ")
	}
	var out []string
	var design string
	var parts []string
	var base *Cost
	var baseState string
	// noFault is the state of a row's no-fault cell ("" without one).
	noFault := func(mr MatrixRow) string {
		for _, c := range mr.Cells {
			if c.Column == "none" {
				return c.State
			}
		}
		return ""
	}
	flush := func() {
		if design != "" {
			out = append(out, design+": "+strings.Join(parts, "; "))
		}
	}
	for _, mr := range mx.Rows {
		if mr.Row.Design != design {
			flush()
			design, parts, base, baseState = mr.Row.Design, nil, mr.Cost, noFault(mr)
		}
		var corrupted, broke, unavailable, unknown []string
		brokeChecks := map[string]bool{}
		for _, c := range mr.Cells {
			switch c.State {
			case StateCorrupted:
				corrupted = append(corrupted, c.Column)
			case StateLockBroke:
				broke = append(broke, c.Column)
				for k := range c.FailingChecks {
					brokeChecks[k] = true
				}
			case StateUnavailable:
				unavailable = append(unavailable, c.Column)
			case StateUnknown:
				unknown = append(unknown, c.Column)
			}
		}
		var says []string
		if len(corrupted) > 0 {
			says = append(says, "data corrupted "+under(corrupted))
		}
		if len(broke) > 0 {
			says = append(says, "lock broke ("+strings.Join(slices.Sorted(maps.Keys(brokeChecks)), ", ")+") "+under(broke)+
				savedBy(system.GuardOf(mr.Row.Config.System, mr.Row.Config.SystemOptions, mr.Row.Config.Storage, mr.Row.Config.FenceReads)))
		}
		if len(unknown) > 0 {
			says = append(says, "undecided "+under(unknown))
		}
		if len(unavailable) > 0 {
			says = append(says, "unavailable "+under(unavailable))
		}
		if len(says) == 0 {
			says = append(says, fmt.Sprintf("no violation in the %s of any fault family tried", count(mx.Seeds, "seed")))
		}
		s := mr.Row.Storage + ": " + strings.Join(says, "; ")
		switch {
		case base == nil || mr.Cost == nil || mr.Cost == base || base.CSPerSecond <= 0:
		case noFault(mr) != baseState:
			// A fence that rejects reads or writes ends critical sections
			// early: the rates are not a speed to compare.
			s += fmt.Sprintf(", %.1f critical sections/s without faults vs %.1f (not comparable: the no-fault runs are %s vs %s)",
				mr.Cost.CSPerSecond, base.CSPerSecond, noFault(mr), baseState)
		default:
			delta := (mr.Cost.CSPerSecond - base.CSPerSecond) / base.CSPerSecond
			switch {
			case delta <= -0.005:
				s += fmt.Sprintf(", %.0f%% slower", -100*delta)
			case delta >= 0.005:
				s += fmt.Sprintf(", %.0f%% faster", 100*delta)
			default:
				s += ", as fast"
			}
		}
		if quiet := noFaultNote(mr); quiet != "" {
			s += " (" + quiet + ")"
		}
		parts = append(parts, s)
	}
	flush()
	return out
}

// noFaultNote says under which fault families some seeds fired no fault
// ("no fault fired in 1 of 2 seeds under pause, 2 of 2 under crash"): a
// cell's "0/2" means less than it says there. "" when every seed fired one.
func noFaultNote(mr MatrixRow) string {
	var parts []string
	for _, c := range mr.Cells {
		if c.NoFault == 0 {
			continue
		}
		if len(parts) == 0 {
			parts = append(parts, fmt.Sprintf("no fault fired in %d of %d seeds under %s", c.NoFault, c.Seeds, c.Column))
			continue
		}
		parts = append(parts, fmt.Sprintf("%d of %d under %s", c.NoFault, c.Seeds, c.Column))
	}
	return strings.Join(parts, ", ")
}
