package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// Run is everything a report says about one run.
type Run struct {
	// Command replays the run.
	Command string `json:"command"`
	// Seed is the run's seed.
	Seed uint64 `json:"seed"`
	// Config is the run's configuration (any JSON-serialisable value).
	Config any `json:"config"`
	// Schedule is the fault schedule (JSON-serialisable), nil for none.
	Schedule any `json:"-"`
	// Events is the history.
	Events []history.Event `json:"-"`
	// Verdicts are the checks' verdicts.
	Verdicts []models.Verdict `json:"verdicts"`
	// Overall merges the verdicts.
	Overall models.Result `json:"overall"`
	// ExitCode is the exit code the run ended with.
	ExitCode int `json:"exit_code"`
	// Summary counts the history's operations and faults.
	Summary models.Summary `json:"summary"`
	// FaultOutcomes say, for each fault of the schedule, whether it fired
	// (nil: not known, as for a history recorded outside the simulator).
	FaultOutcomes []FaultOutcome `json:"fault_outcomes,omitempty"`
	// Faults tally what the run asked of its nemesis and what fired, with
	// the warning of a run that saw no fault (nil: not known, as for a
	// history recorded outside the simulator). results.json carries it as
	// "faults" (Results.Faults), beside the verdicts rather than among them.
	Faults *Faults `json:"-"`
	// ServersRecord is the servers' own record of the grants they made, in
	// true time, when the run kept it (a simulated run of locklab run or
	// repro); nil otherwise, and the report says it was not kept.
	ServersRecord *ServersRecord `json:"servers_record,omitempty"`
	// AppliedWrites are the protected storage's own record of the writes it
	// applied, in true time, when the run kept it (simulated runs of run
	// and repro): with the servers' record, what confirms by hand that a
	// write landed after its writer's lease ran out. Nil otherwise.
	AppliedWrites []AppliedWrite `json:"applied_writes,omitempty"`
	// Extra holds figures a source adds (network counters, kernel events).
	Extra map[string]any `json:"extra,omitempty"`
	// Attachments are further files for the run directory (a Porcupine
	// visualization, say), written by WriteDir and listed in results.json.
	Attachments []Attachment `json:"-"`
	// Expected is what the scenario the run staged expects of it (nil: a
	// run of no scenario, or of a variant that expects nothing in advance).
	Expected *Expected `json:"expected,omitempty"`
	// Notes are said under the verdict, before any warning of the run's
	// own (a live run: what ran, and that it does not replay byte for byte).
	Notes []string `json:"notes,omitempty"`
	// Printed is everything the command printed for the run, first lines
	// included; WriteDir stores it as summary.txt (when empty, the summary
	// PrintSummary prints).
	Printed string `json:"-"`
}

// AppliedWrite is one write the protected storage applied, as it recorded
// it; times are ns of true time.
type AppliedWrite struct {
	// Resource is what applied it ("storage"), Server the node, Key the cell.
	Resource string `json:"resource"`
	Server   string `json:"server"`
	Key      string `json:"key"`
	// Client sent it; Request identifies the request (a duplicated message
	// applies the same request again).
	Client  string `json:"client"`
	Request uint64 `json:"request"`
	// Token is the fencing token it presented (0: none); Value what it wrote.
	Token uint64 `json:"token,omitempty"`
	Value int64  `json:"value"`
	// At is when it was applied; Committed whether it took effect for
	// good, at CommittedAt.
	At          int64 `json:"at"`
	Committed   bool  `json:"committed"`
	CommittedAt int64 `json:"committed_at,omitempty"`
	// Read and ReadAt are the writer's read of Key the value derives from
	// (absent: a blind write).
	Read   *int64 `json:"read,omitempty"`
	ReadAt *int64 `json:"read_at,omitempty"`
}

// Attachment is a further file of a run directory.
type Attachment struct {
	// Name is the file name inside the run directory.
	Name string
	// Label says what it is ("porcupine-visualization").
	Label string
	// Write writes the file's content.
	Write func(w io.Writer) error
}

// FaultOutcome says whether one fault of the schedule fired.
type FaultOutcome struct {
	// Fault is the fault's index in the schedule (faults[i] of schedule.json)
	// and Kind its kind.
	Fault int    `json:"fault"`
	Kind  string `json:"kind"`
	// Fired reports whether the fault took effect; DidNotFire says why a fault
	// that did not fire did not.
	Fired      bool   `json:"fired"`
	DidNotFire string `json:"did_not_fire,omitempty"`
}

// Faults is what a run asked of its nemesis, what it scheduled and what of
// that took effect, per fault kind. A run that asked for faults and saw
// none judged the system without faults: Warning says so, and every surface
// that shows the run (its summary, results.json, its report, a sweep's
// record, an exploration's count) shows it.
type Faults struct {
	// Nemesis is the random nemesis the run asked for ("pause", "random",
	// "pause,partition"), even when its draw was made explicit before the
	// run (a scaled live run, a guided search's mutation); "" when it asked
	// for none, its schedule given whole (a file, a scenario).
	Nemesis string `json:"nemesis,omitempty"`
	// Scheduled counts the faults of the schedule by kind (drawn, read or
	// given); Fired counts those that took effect (a fault outcome's Fired).
	Scheduled map[string]int `json:"scheduled"`
	Fired     map[string]int `json:"fired"`
	// NoneFired reports a run that asked for faults (a random nemesis, or a
	// schedule with faults) in which none took effect.
	NoneFired bool `json:"none_fired"`
	// Missing are the fault kinds a --nemesis list named ("clock" stands for
	// both clock kinds) of which no fault took effect while another kind's
	// did.
	Missing []string `json:"missing,omitempty"`
	// Warning is the sentence a reader must not miss when NoneFired or
	// Missing is set; "" otherwise.
	Warning string `json:"warning,omitempty"`
	// Weak says, for each fault kind none of whose faults reached the
	// design's declared timeout for it (a pause shorter than the lease),
	// the longest fault and the timeout; WeakWarning is the warning a run
	// with weak faults gives, as a run without faults does.
	Weak        []string `json:"weak,omitempty"`
	WeakWarning string   `json:"weak_warning,omitempty"`
}

// TotalFired counts the faults that took effect.
func (f Faults) TotalFired() int {
	n := 0
	for _, c := range f.Fired {
		n += c
	}
	return n
}

// notFired returns the faults that did not fire.
func (r Run) notFired() []FaultOutcome {
	var out []FaultOutcome
	for _, o := range r.FaultOutcomes {
		if !o.Fired {
			out = append(out, o)
		}
	}
	return out
}

// Warnings are what a reader must not miss before reading the verdicts:
// the notes, then the fault warning (FaultWarning).
func (r Run) Warnings() []string {
	out := slices.Clone(r.Notes)
	if w := r.FaultWarning(); w != "" {
		out = append(out, w)
	}
	if r.Faults != nil && r.Faults.WeakWarning != "" {
		out = append(out, r.Faults.WeakWarning)
	}
	return out
}

// FaultWarning says, when the run asked for faults, that none fired (a
// random nemesis that drew none, a schedule none of whose faults fired) or
// that none of a kind it asked for did; "" otherwise. A run directory
// written before Faults was recorded says it from its fault outcomes.
func (r Run) FaultWarning() string {
	if r.Faults != nil {
		return r.Faults.Warning
	}
	n := len(r.FaultOutcomes)
	if n == 0 || len(r.notFired()) < n {
		return ""
	}
	what := fmt.Sprintf("none of the %d scheduled faults fired", n)
	if n == 1 {
		what = "the one scheduled fault did not fire"
	}
	return what + ": this run saw no fault, so its verdicts say nothing about faults"
}

// Results is the layout of results.json.
type Results struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Run
	// Faults repeat Run.Faults (Run leaves them out of its own JSON: they
	// are not verdicts).
	Faults *Faults `json:"faults,omitempty"`
	// Warnings repeat Run.Warnings.
	Warnings []string          `json:"warnings,omitempty"`
	Files    map[string]string `json:"files"`
}

// Files of a run directory.
const (
	HistoryFile  = "history.jsonl"
	ResultsFile  = "results.json"
	ScheduleFile = "schedule.json"
	SummaryFile  = "summary.txt"
)

// WriteDir writes the run directory dir: the history, the schedule, the
// attachments, summary.txt, report.html with its plots, and results.json
// listing every file by label. The directory is written whole beside dir and
// then swapped in, so a run directory from before is replaced whole (no file
// of the earlier run survives) and an interrupted write leaves the old one.
// dir must be as CheckOutDir accepts: absent, empty, or a run directory
// locklab wrote; otherwise the error is an *OutDirError and nothing is
// written.
func WriteDir(dir string, r Run) error {
	final, err := outDir(dir)
	if err != nil {
		return err
	}
	parent, base := filepath.Split(final)
	if parent == "" {
		parent = "."
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".new-")
	if err != nil {
		return &OutDirError{Dir: dir, Reason: plainPathError(err).Error()}
	}
	if err := writeDirFiles(tmp, dir, r); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("write run directory %s: %w", dir, err)
	}
	if err := swapDir(tmp, final); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("write run directory %s: %w", dir, err)
	}
	return nil
}

// writeDirFiles writes the files of the run directory into tmp; dir is the
// name the directory will have, for summary.txt.
func writeDirFiles(tmp, dir string, r Run) error {
	files := map[string]string{"history": HistoryFile, "summary": SummaryFile}
	if err := WriteFileAtomic(filepath.Join(tmp, HistoryFile), func(w io.Writer) error {
		return history.Write(w, r.Events)
	}); err != nil {
		return err
	}
	if r.Schedule != nil {
		files["schedule"] = ScheduleFile
		if err := writeJSON(filepath.Join(tmp, ScheduleFile), r.Schedule); err != nil {
			return err
		}
	}
	for _, a := range r.Attachments {
		if err := WriteFileAtomic(filepath.Join(tmp, a.Name), a.Write); err != nil {
			return err
		}
		files[a.Label] = a.Name
	}
	if err := WriteFileAtomic(filepath.Join(tmp, SummaryFile), func(w io.Writer) error {
		if r.Printed != "" {
			_, err := io.WriteString(w, r.Printed)
			return err
		}
		return PrintSummary(w, r, dir)
	}); err != nil {
		return err
	}
	files["results"] = ResultsFile
	written, err := WriteReport(tmp, r, files)
	if err != nil {
		return err
	}
	files[reportLabel] = written.Report
	for _, p := range written.Plots {
		files[plotLabelPrefix+p] = p
	}
	return writeJSON(filepath.Join(tmp, ResultsFile), Results{Format: resultsFormat, Version: 1, Run: r,
		Faults: r.Faults, Warnings: r.Warnings(), Files: files})
}

func writeJSON(path string, v any) error {
	return WriteFileAtomic(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// PrintSummary prints the verdicts and figures of a run; dir, when set, is
// where its files are. A run that asked for faults and saw none (or none of
// a kind it asked for) says so on its first line.
func PrintSummary(w io.Writer, r Run, dir string) error {
	var b strings.Builder
	fw := r.FaultWarning()
	if fw != "" {
		fmt.Fprintf(&b, "WARNING: %s\n", fw)
	}
	s := r.Summary
	fmt.Fprintf(&b, "history: %s over %s", history.Plural(s.Events, "event", ""), history.FormatDuration(s.Duration))
	if n := len(s.Faults); n > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(s.Faults)) {
			parts = append(parts, fmt.Sprintf("%d %s", s.Faults[k], k))
		}
		fmt.Fprintf(&b, "; faults: %s", strings.Join(parts, ", "))
	}
	b.WriteString("\n")
	for _, f := range s.Functions() {
		c := s.Ops[f]
		fmt.Fprintf(&b, "  %-8s %5d ok %5d fail %5d info", f, c.OK, c.Fail, c.Info)
		if c.Pending > 0 {
			fmt.Fprintf(&b, " %5d pending", c.Pending)
		}
		b.WriteString("\n")
	}
	if s.AcquireSuccess >= 0 {
		fmt.Fprintf(&b, "  acquire success: %.1f%%\n", 100*s.AcquireSuccess)
	}
	printNotFired(&b, r)
	b.WriteString("\n")
	for _, w := range r.Warnings() {
		if w != fw {
			fmt.Fprintf(&b, "WARNING: %s\n\n", w)
		}
	}
	windows := history.FaultWindows(r.Events)
	for _, v := range r.Verdicts {
		fmt.Fprintf(&b, "%-18s %-8s %s\n", v.Check, strings.ToUpper(string(v.Result)), v.Reason)
		if v.Counterexample != nil {
			for _, blk := range explanationBlocks(v.Counterexample.Explanation, windows) {
				fmt.Fprintf(&b, "    %s\n", blk.Text)
				for _, line := range blk.Lines {
					fmt.Fprintf(&b, "      %s\n", line)
				}
			}
		}
	}
	fmt.Fprintf(&b, "\n%s\n", OverallLine(r))
	if dir != "" {
		fmt.Fprintf(&b, "results: %s\n", dir)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// OverallLine is the summary's last word on a run: the overall verdict and
// exit code, what the exit code means when it is ExitDataSafe, and whether
// the run is as its scenario expects: "overall: INVALID (exit 1), as
// scenario kleppmann-gc-pause/unsafe expects".
func OverallLine(r Run) string {
	line := fmt.Sprintf("overall: %s (exit %d)", strings.ToUpper(string(r.Overall)), r.ExitCode)
	if r.ExitCode == ExitDataSafe {
		line += ": " + DataSafeSentence
	}
	if e := r.Expected; e != nil {
		if e.Match {
			line += fmt.Sprintf(", as scenario %s expects", e.Name())
		} else {
			line += fmt.Sprintf(", NOT as scenario %s expects: %s", e.Name(), strings.Join(e.Mismatches, "; "))
		}
	}
	return line
}

// maxNotFiredLines caps the faults listed as "did not fire" in the summary.
const maxNotFiredLines = 10

// printNotFired lists the faults of the schedule that did not fire.
func printNotFired(b *strings.Builder, r Run) {
	missed := r.notFired()
	if len(missed) == 0 {
		return
	}
	fmt.Fprintf(b, "did not fire: %d of %d scheduled faults\n", len(missed), len(r.FaultOutcomes))
	rows, _ := scheduleRows(r.Schedule, nil)
	for i, o := range missed {
		if i == maxNotFiredLines {
			fmt.Fprintf(b, "  ... and %d more (see fault_outcomes in results.json)\n", len(missed)-maxNotFiredLines)
			break
		}
		var row *scheduleRow
		if o.Fault >= 0 && o.Fault < len(rows) {
			row = &rows[o.Fault]
		}
		fmt.Fprintf(b, "  %s: %s\n", faultName(o.Fault, o.Kind, row), o.DidNotFire)
	}
}
