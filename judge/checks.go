package judge

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

// CheckConfig configures the checks for test t; initial are the storage
// cells' values before the run (cells it does not name start at 0).
func CheckConfig(t scenario.Test, initial map[string]int64) models.Config {
	budget := models.Budget{Steps: t.CheckSteps, Time: max(t.CheckBudget, 0)}
	sys, _ := system.Find(t.System) // an unknown system counts nested grants and may reorder
	return models.Config{
		Uncounted:      sys.Uncounted,
		Budget:         budget,
		Initial:        initial,
		InitialKnown:   true,
		Resource:       resourceOf(t.Workload),
		StorageFenced:  t.Storage == storage.Fenced,
		ReadsFenced:    t.Storage == storage.Fenced && t.FenceReads,
		InitialDefault: 0,
		StallMax:       t.Liveness.StallMax,
		RecoveryMax:    t.Liveness.RecoveryMax,
		MinSuccess:     t.Liveness.MinSuccess,
		MinAttempts:    t.Liveness.MinAttempts,
		InOrder:        sys.InOrder,
	}
}

// resourceOf is the shape of the resource a workload protects.
func resourceOf(workload string) models.Resource {
	switch workload {
	case "stock":
		return models.ResourceStock
	case "append", "list-append":
		return models.ResourceList
	}
	return models.ResourceAuto
}

// Checked is what the checks said about a history.
type Checked struct {
	// Verdicts are the verdicts of the checks that ran, in report order.
	Verdicts []models.Verdict
	// Skipped are the checks left out by default, with the reason.
	Skipped []models.Skipped
}

// CheckHistory runs the checks named in names (every check that applies,
// when empty) on events, configured by cfg. A system's audit (raft-audit)
// cannot judge a history: naming one is an error that says where it runs.
func CheckHistory(cfg models.Config, names []string, events []history.Event) (Checked, error) {
	h, err := history.Pair(events)
	return CheckPaired(cfg, names, events, h, err)
}

// CheckPaired is CheckHistory of events already paired by history.Pair
// (pairErr is its error).
func CheckPaired(cfg models.Config, names []string, events []history.Event, h *history.Paired, pairErr error) (Checked, error) {
	for _, n := range names {
		name := strings.TrimPrefix(n, "+")
		if slices.Contains(scenario.AuditNames(), name) && !slices.Contains(scenario.CheckNames, name) {
			return Checked{}, fmt.Errorf("check %q audits the servers of a simulated run, not a history: it runs in 'locklab run --system %s'",
				name, strings.Join(scenario.AuditSystems(name), "|"))
		}
	}
	var (
		checks  []models.Check
		skipped []models.Skipped
		err     error
	)
	if h != nil {
		checks, skipped, err = cfg.SelectPaired(names, h)
	} else { // the pairing failed (pairErr)
		checks, skipped, err = cfg.Select(names, events)
	}
	if err != nil {
		return Checked{}, err
	}
	return Checked{Verdicts: models.RunPaired(checks, h, pairErr), Skipped: skipped}, nil
}

// ChecksRecord is what results.json says about the checks: which ran, which
// were left out and why, and the search budget (only verdicts with
// "exhausted" set depend on it).
type ChecksRecord struct {
	Ran     []string         `json:"ran"`
	Skipped []models.Skipped `json:"skipped"`
	Budget  string           `json:"budget"`
}

// Record is the checks' entry of results.json.
func (c Checked) Record(b models.Budget) ChecksRecord {
	rec := ChecksRecord{Ran: []string{}, Skipped: c.Skipped, Budget: b.String()}
	if rec.Skipped == nil {
		rec.Skipped = []models.Skipped{}
	}
	for _, v := range c.Verdicts {
		rec.Ran = append(rec.Ran, v.Check)
	}
	return rec
}

// Attachments are the files the verdicts add to a run directory: Porcupine's
// visualization of every invalid linearizability check, labelled
// "porcupine:<check>" (none when its analysis ran out of the time budget).
func Attachments(vs []models.Verdict) []reports.Attachment {
	var out []reports.Attachment
	for _, v := range vs {
		if v.Result != models.Invalid || !v.Visualization.Available() {
			continue
		}
		vis := v.Visualization
		out = append(out, reports.Attachment{
			Name:  "porcupine-" + v.Check + ".html",
			Label: "porcupine:" + v.Check,
			Write: func(w io.Writer) error { return vis.WriteHTML(w) },
		})
	}
	return out
}

// PrintCounterexamples prints, for every invalid verdict, the events of its
// counterexample and the fault windows around them.
func PrintCounterexamples(w io.Writer, vs []models.Verdict) error {
	var b strings.Builder
	for _, v := range vs {
		cx := v.Counterexample
		if v.Result != models.Invalid || cx == nil || len(cx.Events)+len(cx.Faults) == 0 {
			continue
		}
		lines := mergeEvents(cx.Events, cx.Faults)
		fmt.Fprintf(&b, "\n%s counterexample (%s):\n", v.Check, history.Plural(len(lines), "event", ""))
		for _, e := range lines {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mergeEvents merges two index-ordered event lists, without duplicates.
func mergeEvents(a, b []history.Event) []history.Event {
	out := make([]history.Event, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Index < b[j].Index):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].Index < a[i].Index:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}
