package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/locklab/locklab/harness"
)

// Progress display of a long run: nothing for progressDelay of wall time (a
// quick run stays quiet), then a bar when stderr is a terminal, or a plain
// line every progressInterval otherwise. It only reads what the simulation
// reports; the run is the same with or without it.
const (
	progressDelay    = 2 * time.Second
	progressInterval = 5 * time.Second
)

type runProgress struct {
	out   io.Writer
	tty   bool
	now   func() time.Time
	start time.Time
	// shown: something was printed; last: when the last plain line was.
	shown bool
	last  time.Time
	bar   *progressbar.ProgressBar
}

func newRunProgress(out io.Writer, tty bool, now func() time.Time) *runProgress {
	return &runProgress{out: out, tty: tty, now: now, start: now()}
}

// update is the harness.Watch callback.
func (r *runProgress) update(p harness.Progress) {
	t := r.now()
	elapsed := t.Sub(r.start)
	if elapsed < progressDelay {
		return
	}
	if p.Done {
		if r.shown {
			r.clearBar()
			fmt.Fprintf(r.out, "locklab: simulated %v in %v; checking %s history events\n",
				p.Total, elapsed.Round(time.Second), thousands(int64(p.HistoryEvents)))
		}
		return
	}
	if r.tty {
		r.drawBar(p, elapsed)
		return
	}
	if r.shown && t.Sub(r.last) < progressInterval {
		return
	}
	r.shown, r.last = true, t
	fmt.Fprintf(r.out, "locklab: %s\n", progressLine(p, elapsed))
}

func (r *runProgress) drawBar(p harness.Progress, elapsed time.Duration) {
	line := progressLine(p, elapsed)
	if r.bar == nil {
		r.shown = true
		r.bar = progressbar.NewOptions64(p.Total.Milliseconds(), progressbar.OptionSetWriter(r.out),
			progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionSetWidth(20),
			progressbar.OptionSetDescription(line), progressbar.OptionShowDescriptionAtLineEnd(),
			progressbar.OptionSetPredictTime(false), progressbar.OptionSetElapsedTime(false),
			progressbar.OptionClearOnFinish())
	}
	_ = r.bar.Set64(p.Simulated.Milliseconds())
	r.bar.Describe(line)
}

func (r *runProgress) clearBar() {
	if r.bar != nil {
		_ = r.bar.Clear()
		r.bar = nil
	}
}

// finish clears the bar when the run ends early (an error).
func (r *runProgress) finish() { r.clearBar() }

// progressLine is "simulated 5m0s of 1h0m0s (8%), 1.2M kernel events/s, 40,000
// history events, ETA 55s".
func progressLine(p harness.Progress, elapsed time.Duration) string {
	frac := float64(p.Simulated) / float64(max(p.Total, 1))
	line := fmt.Sprintf("simulated %v of %v (%d%%), %s kernel events/s, %s history events",
		p.Simulated.Round(time.Second), p.Total, int(100*frac), rate(float64(p.KernelEvents)/elapsed.Seconds()),
		thousands(int64(p.HistoryEvents)))
	if frac > 0 {
		eta := time.Duration(float64(elapsed) * (1 - frac) / frac)
		line += fmt.Sprintf(", ETA %v", eta.Round(time.Second))
	}
	return line
}

// rate renders events per second: 950, 12k, 1.2M.
func rate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.1fM", r/1e6)
	case r >= 1e4:
		return fmt.Sprintf("%.0fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}

// thousands renders n with thousands separators: 1,234,567.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// progressOf is the progress display a long command's --progress flag asks
// for: given true, a bar; given false, nothing; not given, a bar on a
// terminal and a line per finished item otherwise.
func progressOf(cmd *cobra.Command, bar bool) progressMode {
	switch {
	case cmd.Flags().Changed("progress") && bar:
		return progressBar
	case cmd.Flags().Changed("progress"):
		return progressNone
	case isTerminal(cmd.ErrOrStderr()):
		return progressBar
	}
	return progressLines
}

// cellProgressFlag declares the --progress flag of the commands that report
// finished cells (sweep, matrix), read with progressOf.
func cellProgressFlag(fl *pflag.FlagSet, bar *bool) {
	fl.BoolVar(bar, "progress", true, "show progress on stderr (default: a bar on a terminal, else a line per finished cell; false: nothing)")
}
