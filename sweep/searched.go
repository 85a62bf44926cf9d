package sweep

// The safety matrix decided by search (locklab matrix): each cell — a
// design in one storage mode under one fault family — is decided by a
// guided search aimed at it, not by a handful of random seeds. These are the
// types of its matrix.json; the search fills them and the page renders them.

// Cell verdicts of a searched matrix, worst first.
const (
	// VerdictCorrupted: a run corrupted the protected data (critical
	// sections not atomic).
	VerdictCorrupted = "corrupted"
	// VerdictLockBroke: the lock broke (two holders at once, a broken lease
	// or mutex) but no run found the data corrupted: the row's Guard saved it.
	VerdictLockBroke = "lock-broke"
	// VerdictTokenOrder: fencing tokens went out of order, no run found the
	// lock broken or the data corrupted.
	VerdictTokenOrder = "token-order"
	// VerdictLiveness: only liveness failed (a lock stuck or never granted).
	VerdictLiveness = "liveness"
	// VerdictUnknown: no violation, but some checks could not decide.
	VerdictUnknown = "unknown"
	// VerdictNoViolation: no violation found in the runs the Evidence
	// states. Never printed as "safe".
	VerdictNoViolation = "no-violation"
	// VerdictNoFault: no run of the cell fired a fault of its family: the
	// cell says nothing.
	VerdictNoFault = "no-fault"
)

// SearchedMatrix is the safety matrix of `locklab matrix`.
type SearchedMatrix struct {
	// Preset names the grid ("matrix", "full").
	Preset string `json:"preset"`
	// Fingerprint identifies the matrix's settings: a resume refuses a
	// directory of other settings.
	Fingerprint string `json:"fingerprint"`
	// Columns are the fault families, in order.
	Columns []string `json:"columns"`
	// Budget is the most runs a cell's search makes; Time the simulated
	// length of each run; Clients the clients of each run.
	Budget  int      `json:"budget"`
	Time    Duration `json:"time"`
	Clients int      `json:"clients"`
	// Runs counts every simulated run the matrix made (searches, shrinking
	// and the cost baselines).
	Runs int           `json:"runs"`
	Rows []SearchedRow `json:"rows"`
}

// SearchedRow is one design in one storage mode.
type SearchedRow struct {
	// ID is a short hash of Config.
	ID string `json:"id"`
	// Design is the design in its users' words (system.Design.Name).
	Design string `json:"design"`
	// NoLock says the design takes no lock (system.Design.NoLock): its
	// cells are judged by the data checks alone.
	NoLock bool `json:"no_lock,omitempty"`
	// System is the registered system.
	System string `json:"system"`
	// Storage is the storage mode: unfenced, fenced, fenced+reads or check.
	Storage string `json:"storage"`
	// Guard names what keeps the data safe when the lock breaks in this mode
	// ("" when nothing but the lock does; see system.DesignMode.Guard).
	Guard string `json:"guard,omitempty"`
	// Config is the row's exact configuration; Flags the same as
	// `locklab run` flags ("--system redis -o fencing=true --storage fenced").
	Config Config         `json:"config"`
	Flags  string         `json:"flags"`
	Cells  []SearchedCell `json:"cells"`
	// Beyond names the system's duration options longer than the runs
	// ("lock-delay 1m0s"): a violation that needs a fault outlasting one of
	// them cannot show in this row's cells.
	Beyond []string `json:"beyond,omitempty"`
	// Shape is the row's run shape (its runs' length, fitted to the
	// timeouts its design declares); nil in a matrix of before shapes.
	Shape *Shape `json:"shape,omitempty"`
	// Cost is measured on fault-free runs and failover runs; nil when not
	// measured.
	Cost *RowCost `json:"cost,omitempty"`
}

// SearchedCell is one row under one fault family.
type SearchedCell struct {
	Column string `json:"column"`
	// Verdict is one of the Verdict constants: the worst thing the search
	// found.
	Verdict string `json:"verdict"`
	// Findings are the first run of each kind of violation the search found
	// (corrupted, lock-broke, token-order, liveness), worst first, each
	// shrunk; empty when none.
	Findings []Finding `json:"findings,omitempty"`
	// Evidence is what the search did, whatever it found.
	Evidence Evidence `json:"evidence"`
}

// Finding is a violation a cell's search found, shrunk.
type Finding struct {
	// Kind is the verdict it supports (VerdictCorrupted, ...).
	Kind string `json:"kind"`
	// Checks are the checks the run failed.
	Checks []string `json:"checks"`
	// RunsTo is the run of the search that found it (1: the first).
	RunsTo int `json:"runs_to"`
	// Faults are the shrunk schedule's faults, one line each
	// ("pause c4 at 24.3s for 11.0s"); Story is the shrunk run's story in
	// one sentence.
	Faults []string `json:"faults"`
	Story  string   `json:"story"`
	// Replay is the command that replays the shrunk run; Dir its run
	// directory, relative to the matrix directory.
	Replay string `json:"replay"`
	Dir    string `json:"dir"`
}

// Evidence is what a cell's search did.
type Evidence struct {
	// Runs counts the guided search's runs (a finding's included); the
	// systematic search's are counted in Placements.
	Runs int `json:"runs"`
	// Fired counts the runs in which a fault of the cell's family took hold
	// (judge.FaultsOf: the fault took effect); Quiet the runs in which none did, which are not
	// evidence and are counted apart.
	Fired int `json:"fired"`
	Quiet int `json:"quiet"`
	// Undecided counts the runs some check could not decide.
	Undecided int `json:"undecided,omitempty"`
	// Failed counts, per check, the runs of the search it failed in (the
	// shrinking's runs not counted).
	Failed map[string]int `json:"failed,omitempty"`
	// Largest is the largest fault that fired relative to the system's
	// timing, in words ("pauses up to 3.2x the lease of 10s"); LargestRatio
	// the ratio.
	Largest      string  `json:"largest,omitempty"`
	LargestRatio float64 `json:"largest_ratio,omitempty"`
	// Beyond names the system's duration options longer than the runs
	// ("lock-delay 1m0s"): a violation that needs a fault outlasting one of
	// them is beyond the search (the row says so once: SearchedRow.Beyond).
	Beyond []string `json:"beyond,omitempty"`
	// Bound is the 95% upper bound on the per-run rate of data corruption
	// given Fired runs without one (1 - 0.05^(1/Fired)); 0 when a
	// corruption was found or nothing fired.
	Bound float64 `json:"bound,omitempty"`
	// Placements is the systematic part of the search (nil for the swarm
	// family, which has none): every single fault of the family within a
	// stated bound.
	Placements *Placements `json:"placements,omitempty"`
	// Line is the evidence in one sentence, as the page prints it ("no
	// violation found in 400 runs (388 with a pause fired, pauses up to 3.2x
	// the lease): < 0.75% per run, 95%").
	Line string `json:"line"`
}

// StarveShare is the share of a row's fault-free grants above which one
// client is said to starve the others (RowCost.Starved).
const StarveShare = 0.9

// RowCost is what a design costs its users: latency and throughput on
// fault-free runs (Cost), how the grants were shared among the clients
// there, and how long the lock stays unavailable after its holder crashes.
type RowCost struct {
	Cost
	// Grants counts the grants each client got over the fault-free runs,
	// c1 first; TopShare is the largest share of a run's grants one client
	// got, in the most lopsided run, and Starved says it is above
	// StarveShare: the throughput comes from one client while the others
	// wait (never under a workload of leadership, workloads.Entry.Leadership:
	// there one leader holding is the point).
	Grants   []int   `json:"grants,omitempty"`
	TopShare float64 `json:"top_share,omitempty"`
	Starved  bool    `json:"starved,omitempty"`
	// FailoverMS is the median, over FailoverRuns runs, of the time from
	// the crash of the client holding the lock (right after its first grant;
	// it never restarts) to the next grant to another client. A run in
	// which no other client got the lock before its end counts the rest of
	// the run, and is counted in FailoverNever: the median is then only a
	// lower bound when FailoverNever is more than half the runs.
	FailoverMS    float64 `json:"failover_ms"`
	FailoverRuns  int     `json:"failover_runs"`
	FailoverNever int     `json:"failover_never,omitempty"`
}

// FailoverAtLeast says FailoverMS is only a lower bound (most failover runs
// ended with no other client granted the lock).
func (c *RowCost) FailoverAtLeast() bool { return 2*c.FailoverNever > c.FailoverRuns }
