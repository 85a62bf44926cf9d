package judge

import (
	"slices"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

// Exit codes of `locklab run`, `check` and `repro`.
const (
	// ExitValid: every check valid.
	ExitValid = 0
	// ExitInvalid: a safety check is invalid.
	ExitInvalid = 1
	// ExitUsage: bad flags, unknown names, malformed input files.
	ExitUsage = 2
	// ExitUnknown: no safety check invalid, but a check could not decide, or a
	// liveness check failed.
	ExitUnknown = 3
	// ExitCrash: the harness itself failed (a panic in the simulation, an I/O error).
	ExitCrash = 4
	// ExitDataSafe: the lock broke, the data is safe. Only the lock's own
	// checks (mutual-exclusion, lease, mutex) are invalid; the storage was fenced
	// and every other check is valid, critical-sections and fencing-tokens
	// among them: a fenced design working as designed. A CI job that relies
	// on fencing accepts 0 and 5.
	ExitDataSafe = reports.ExitDataSafe
)

// lockChecks are the checks of the lock itself, as against the data it
// guards: what a fenced design may fail while its data stays safe.
var lockChecks = []string{"mutual-exclusion", "lease", "mutex"}

// dataChecks must run, and be valid, for a broken lock to leave the data
// safe.
var dataChecks = []string{"critical-sections", "fencing-tokens"}

// ExitCode maps verdicts to the exit code.
func ExitCode(vs []models.Verdict) int {
	switch models.Overall(vs) {
	case models.Valid:
		return ExitValid
	case models.Invalid:
		if DataSafe(vs) {
			return ExitDataSafe
		}
		for _, v := range vs {
			if v.Result == models.Invalid && !v.Liveness {
				return ExitInvalid
			}
		}
	}
	return ExitUnknown
}

// DataSafe reports whether the verdicts say the lock broke and the data is
// safe: a lock check (mutual-exclusion, lease, mutex) invalid, the data checks
// (critical-sections, fencing-tokens) run and valid, and every other check
// valid.
func DataSafe(vs []models.Verdict) bool {
	broke, data := false, 0
	for _, v := range vs {
		switch {
		case slices.Contains(lockChecks, v.Check) && v.Result == models.Invalid:
			broke = true
		case v.Result != models.Valid:
			return false
		case slices.Contains(dataChecks, v.Check):
			data++
		}
	}
	return broke && data == len(dataChecks)
}

// Report turns a result into what the reports package renders; command is the
// command line that replays the run.
func Report(r scenario.Result, command string) reports.Run {
	run := reports.Run{
		Command:  command,
		Seed:     r.Test.Seed,
		Config:   r.Test.Effective(),
		Events:   r.Events,
		Verdicts: r.Verdicts,
		Overall:  r.Overall,
		ExitCode: ExitCode(r.Verdicts),
		Summary:  r.Summary,
		Extra: map[string]any{
			"network":       r.Network,
			"kernel_events": r.KernelEvents,
			"checks":        Checked{Verdicts: r.Verdicts, Skipped: r.Skipped}.Record(CheckConfig(r.Test, nil).Budget),
		},
		Attachments: Attachments(r.Verdicts),
		Notes:       slices.Clone(r.Notes),
	}
	if r.SystemFigures != nil {
		run.Extra["system"] = r.SystemFigures
	}
	schedule := r.Schedule
	if schedule.Faults == nil {
		schedule.Faults = []nemesis.Fault{}
	}
	run.Schedule = schedule
	for _, o := range r.FaultOutcomes {
		run.FaultOutcomes = append(run.FaultOutcomes, reports.FaultOutcome{Fault: o.Fault, Kind: string(o.Kind),
			Fired: o.Fired, DidNotFire: o.DidNotFire})
	}
	f := FaultsOf(r)
	run.Faults = &f
	run.ServersRecord = serversRecord(r)
	run.AppliedWrites = appliedWrites(r)
	return run
}

// appliedWrites is the storage's record of the writes it applied, as
// results.json carries it; nil when the run did not keep it.
func appliedWrites(r scenario.Result) []reports.AppliedWrite {
	if r.Writes == nil {
		return nil
	}
	return AppliedWrites(r.Writes.Writes())
}

// AppliedWrites are the storage's applied writes ws as results.json
// carries them (library mode's runs write theirs through it too).
func AppliedWrites(ws []lockapi.AppliedWrite) []reports.AppliedWrite {
	out := make([]reports.AppliedWrite, 0, len(ws))
	for _, w := range ws {
		a := reports.AppliedWrite{Resource: w.Resource, Server: w.Server, Key: w.Key, Client: w.Client, Request: w.Request,
			Token: w.Token, Value: w.Value, At: int64(w.At), Committed: w.Committed}
		if w.Committed {
			a.CommittedAt = int64(w.CommittedAt)
		}
		if w.HasRead {
			read, at := w.Read, int64(w.ReadAt)
			a.Read, a.ReadAt = &read, &at
		}
		out = append(out, a)
	}
	return out
}

// serversRecord is the servers' record of the grants as the report shows
// it, through the end of the run; nil when the run did not keep it.
func serversRecord(r scenario.Result) *reports.ServersRecord {
	if r.Grants == nil {
		return nil
	}
	end := r.Test.Time
	if r.Ended > 0 {
		end = r.Ended
	}
	return ServersRecord(r.Grants.Grants(), r.Grants.Quorum(), end)
}

// ServersRecord is the servers' record of the grants gs (granted by quorum
// servers), to end, as results.json carries it (library mode's runs write
// theirs through it too).
func ServersRecord(gs []lockapi.Grant, quorum int, end time.Duration) *reports.ServersRecord {
	rec := &reports.ServersRecord{Quorum: quorum, End: int64(end), Grants: make([]reports.ServerGrant, 0, len(gs))}
	for _, g := range gs {
		rec.Grants = append(rec.Grants, reports.ServerGrant{Scope: g.Scope, Server: g.Server, Key: g.Key,
			Owner: g.Owner, Client: g.Client, At: int64(g.At), Until: int64(g.Until), Released: int64(g.Released),
			RemovedBy: g.RemovedBy, Removed: int64(g.Removed), Revoked: g.Revoked})
	}
	return rec
}
