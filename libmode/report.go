package libmode

import (
	"fmt"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/reports"
)

// WriteReport writes r's run directory, as `locklab run` writes one for a
// built-in system: history.jsonl, schedule.json (the schedule form),
// summary.txt, report.html with its plots, results.json with the
// servers' record of grants and the storage's record of writes, and the
// Porcupine view of an invalid check. command is the line that replays
// the run. dir must be absent, empty or a run directory written before
// (reports.CheckOutDir); it is replaced whole.
func WriteReport(dir string, r Result, command string) error {
	run := reports.Run{
		Command:       command,
		Seed:          r.Seed,
		Config:        reportConfig(r),
		Events:        r.Events,
		Verdicts:      r.Verdicts,
		Overall:       models.Overall(r.Verdicts),
		ExitCode:      judge.ExitCode(r.Verdicts),
		Summary:       models.Summarize(r.Events),
		ServersRecord: serversRecord(r),
		AppliedWrites: appliedWrites(r),
		Attachments:   judge.Attachments(r.Verdicts),
		Notes:         []string{"library mode: the library ran unmodified in a testing/synctest bubble against the simulated Redis"},
		Printed:       r.Summary(),
	}
	if len(r.Schedule.Faults) > 0 {
		run.Schedule = r.Schedule
	}
	if r.Note != "" {
		run.Notes = append(run.Notes, r.Note)
	}
	if r.ScheduleErr != "" {
		run.Notes = append(run.Notes, "faults without a schedule form, left out of schedule.json: "+r.ScheduleErr)
	}
	if err := reports.WriteDir(dir, run); err != nil {
		return fmt.Errorf("libmode: write the run directory %s: %w", dir, err)
	}
	return nil
}

// reportConfig is the run's configuration as results.json records it.
func reportConfig(r Result) map[string]any {
	c := r.Config
	return map[string]any{"mode": "library", "seed": c.Seed, "instances": c.Instances, "clients": c.Clients,
		"duration": c.Duration.String(), "key": c.Key, "storage": string(c.Storage), "fence_reads": c.FenceReads, "hold": c.Hold.String(),
		"think": c.Think.String(), "latency": c.Latency.String(), "jitter": c.Jitter.String(), "faults": r.Faults}
}

func serversRecord(r Result) *reports.ServersRecord {
	rec := &reports.ServersRecord{Quorum: r.Config.Instances/2 + 1, End: int64(r.Virtual), Grants: make([]reports.ServerGrant, 0, len(r.Grants))}
	for _, g := range r.Grants {
		rec.Grants = append(rec.Grants, reports.ServerGrant{Scope: g.Scope, Server: g.Server, Key: g.Key,
			Owner: g.Owner, Client: g.Client, At: int64(g.At), Until: int64(g.Until), Released: int64(g.Released),
			RemovedBy: g.RemovedBy, Removed: int64(g.Removed), Revoked: g.Revoked})
	}
	return rec
}

func appliedWrites(r Result) []reports.AppliedWrite {
	out := make([]reports.AppliedWrite, 0, len(r.Writes))
	for _, w := range r.Writes {
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
