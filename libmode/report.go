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

// serversRecord is the instances' record of grants as results.json
// carries it (a grant of a majority of the instances is the lock's).
func serversRecord(r Result) *reports.ServersRecord {
	return judge.ServersRecord(r.Grants, r.Config.Instances/2+1, r.Virtual)
}

// appliedWrites is the storage's record of the writes it applied.
func appliedWrites(r Result) []reports.AppliedWrite { return judge.AppliedWrites(r.Writes) }
