package sweep

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// mark is a cell in the summary's table: its verdict and the run that
// showed it, or the runs that showed nothing. It never says "safe".
func mark(c SearchedCell) string {
	if len(c.Findings) > 0 {
		f := c.Findings[0]
		word := map[string]string{VerdictCorrupted: "CORRUPTED", VerdictLockBroke: "broke", VerdictTokenOrder: "tokens", VerdictLiveness: "liveness"}[f.Kind]
		return fmt.Sprintf("%s r%d", word, f.RunsTo)
	}
	placed := ""
	if p := c.Evidence.Placements; p != nil {
		placed = fmt.Sprintf("%d+", p.Ran)
	}
	switch c.Verdict {
	case VerdictNoFault:
		return "no fault"
	case VerdictUnknown:
		return fmt.Sprintf("unknown/%s%d", placed, c.Evidence.Fired)
	}
	return fmt.Sprintf("none/%s%d", placed, c.Evidence.Fired)
}

// WriteSearchedText writes a searched matrix as plain text: its settings,
// a table of its cells with a legend and, with details, every cell's
// evidence and findings (their faults, story and replay command).
func WriteSearchedText(w io.Writer, m SearchedMatrix, details bool) error {
	var b strings.Builder
	cells, corrupted, broke := 0, 0, 0
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			cells++
			switch c.Verdict {
			case VerdictCorrupted:
				corrupted++
			case VerdictLockBroke:
				broke++
			}
		}
	}
	preset := m.Preset
	if preset == "" {
		preset = "custom"
	}
	fmt.Fprintf(&b, "safety matrix (preset %s, %s): %d rows × %d fault families; each cell every single-fault placement of its family, then a guided search of up to %d runs; runs of at least %v (each row's fitted to its timeouts) with %d clients; %d simulated runs in all\n",
		preset, m.Fingerprint, len(m.Rows), len(m.Columns), m.Budget, time.Duration(m.Time), m.Clients, m.Runs)
	fmt.Fprintf(&b, "%d of %d cells corrupted data; in %d more the lock broke and no corruption was found\n\n", corrupted, cells, broke)
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	fmt.Fprint(tw, "DESIGN\tSTORAGE")
	for _, col := range m.Columns {
		fmt.Fprint(tw, "\t"+strings.ToUpper(col))
	}
	fmt.Fprintln(tw)
	for _, r := range m.Rows {
		fmt.Fprintf(tw, "%s\t%s", r.Design, r.Storage)
		for _, c := range r.Cells {
			fmt.Fprint(tw, "\t"+mark(c))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString(`
CORRUPTED rN: data corrupted, first in run N of the cell's search (which then stops).
broke rN / tokens rN / liveness rN: the lock broke, fencing tokens went out of order, or the
  lock got stuck, first in run N; no data corruption found in the whole search.
none/P+N: no violation found in all P single-fault placements of the family (systematic: each
  fault's start and end anchored at the clients' protocol steps, its length straddling each
  declared timeout; the bound is below, per cell) nor in the N guided runs in which a fault of
  the family fired, an upper bound on their rate, not a proof ("+300": < 1% per run, 95%). The
  random family has no placements (none/N). no fault: no fault of the family fired in any run:
  the cell says nothing.
`)
	if details {
		writePlacementBounds(&b, m)
		for _, r := range m.Rows {
			fmt.Fprintf(&b, "\n%s · %s (%s)", r.Design, r.Storage, r.Flags)
			if r.Guard != "" {
				fmt.Fprintf(&b, "; when the lock breaks: %s", r.Guard)
			}
			b.WriteString("\n")
			runTime := time.Duration(m.Time)
			if r.Shape != nil {
				runTime = time.Duration(r.Shape.Time)
				fmt.Fprintf(&b, "  run shape: %v with %d clients, long enough for its timeouts (%s); %s\n", runTime, m.Clients, strings.Join(r.Shape.Timeouts, "; "), guidedWords(m.Budget, r.Shape.Guided))
			}
			if len(r.Beyond) > 0 {
				fmt.Fprintf(&b, "  runs of %v are shorter than %s: a violation that needs a fault outlasting it is beyond these searches\n",
					runTime, strings.Join(r.Beyond, " and "))
			}
			if r.Cost != nil {
				if r.NoLock {
					fmt.Fprintf(&b, "  cost without faults: no lock is taken (no acquire latency, nothing to fail over); %.1f critical sections/s; %.1f messages per section\n",
						r.Cost.CSPerSecond, r.Cost.MessagesPerAcquire)
					fmt.Fprintf(&b, "  %s\n", fairnessWords(r.Cost))
				} else {
					fmt.Fprintf(&b, "  cost without faults: acquire p50 %.1f ms, p99 %.1f ms; %.1f critical sections/s; %.1f messages per acquire\n",
						r.Cost.AcquireP50MS, r.Cost.AcquireP99MS, r.Cost.CSPerSecond, r.Cost.MessagesPerAcquire)
					fmt.Fprintf(&b, "  %s; %s\n", failoverWords(r.Cost), fairnessWords(r.Cost))
				}
			}
			for _, c := range r.Cells {
				fmt.Fprintf(&b, "  %s: %s\n", c.Column, c.Evidence.Line)
				for _, f := range c.Findings {
					fmt.Fprintf(&b, "    %s (run %d, %s): %s\n", kindPhrase[f.Kind], f.RunsTo, strings.Join(f.Checks, ", "), f.Story)
					for _, line := range f.Faults {
						fmt.Fprintf(&b, "      fault: %s\n", line)
					}
					if f.Dir != "" {
						fmt.Fprintf(&b, "      run directory: %s\n", f.Dir)
					}
					fmt.Fprintf(&b, "      replay (from the matrix directory): %s\n", f.Replay)
				}
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writePlacementBounds says, once per family, what its systematic search
// enumerates (the timeouts straddled and the run length are each row's).
func writePlacementBounds(b *strings.Builder, m SearchedMatrix) {
	said := false
	for _, col := range m.Columns {
		for _, r := range m.Rows {
			i := slices.IndexFunc(r.Cells, func(c SearchedCell) bool { return c.Column == col && c.Evidence.Placements != nil })
			if i < 0 {
				continue
			}
			if !said {
				b.WriteString("\nSystematic placements, per family (each row straddles its own timeouts, named under it):\n")
				said = true
			}
			fmt.Fprintf(b, "  %s: %s\n", col, r.Cells[i].Evidence.Placements.Bound)
			break
		}
	}
}

// failoverWords is a row's failover time in words: "failover after the
// holder crashes 10.2s (median of 3 runs)".
func failoverWords(c *RowCost) string {
	if c.FailoverRuns == 0 {
		return "failover not measured (no client was granted the lock)"
	}
	at := ""
	if c.FailoverAtLeast() {
		at = "at least "
	}
	s := fmt.Sprintf("failover after the holder crashes %s%v (median of %d runs", at, time.Duration(c.FailoverMS*1e6).Round(time.Millisecond), c.FailoverRuns)
	if c.FailoverNever > 0 {
		s += fmt.Sprintf("; in %d no other client got the lock before the run ended", c.FailoverNever)
	}
	return s + ")"
}

// fairnessWords is how a row's fault-free grants were shared: "grants per
// client 52%, 48%", with "one client starves the others" past StarveShare.
func fairnessWords(c *RowCost) string {
	total := 0
	for _, g := range c.Grants {
		total += g
	}
	if total == 0 {
		return "no grants"
	}
	var shares []string
	for _, g := range c.Grants {
		shares = append(shares, fmt.Sprintf("%.0f%%", 100*float64(g)/float64(total)))
	}
	s := fmt.Sprintf("grants per client %s (one client got %.0f%% of one run's)", strings.Join(shares, ", "), 100*c.TopShare)
	if c.Starved {
		s += ": one client starves the others"
	}
	return s
}

// guidedWords say how many guided runs each cell of a row makes at most.
func guidedWords(budget, guided int) string {
	if guided == 0 || guided == budget {
		return fmt.Sprintf("up to %d guided runs per cell", budget)
	}
	return fmt.Sprintf("up to %d guided runs per cell (the budget of %d scaled to runs of %v)", guided, budget, GuidedRunTime)
}
