package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

// livenessFlags are the flags of `run` that tune the liveness check and bound
// the run's memory. A flag the user did not type leaves the test's field at
// its default; a typed value is used as typed, or refused.
type livenessFlags struct {
	minSuccess  shareFlag
	minAttempts intFlag
	maxStall    durationFlag
	maxRecovery durationFlag
	maxEvents   intFlag
}

func (l *livenessFlags) register(fl *pflag.FlagSet) {
	l.minSuccess.v = models.DefaultMinSuccess
	l.minAttempts.v, l.minAttempts.min = models.DefaultMinAttempts, 1
	l.maxRecovery.v = models.DefaultRecoveryMax
	l.maxEvents.v, l.maxEvents.min = scenario.DefaultMaxHistoryEvents, 1
	fl.Var(&l.minSuccess, "liveness-min-success",
		"least share of the acquire attempts made while no fault was active that must succeed, 0..1 or a percentage (0: not judged)")
	fl.Var(&l.minAttempts, "liveness-min-attempts", "acquire attempts outside faults needed before that share is judged")
	fl.Var(&l.maxStall, "liveness-max-stall",
		fmt.Sprintf("longest tolerated stall: clients waiting, nobody holding the lock, no fault active (default %v, or 1.5 times the longest lease if longer)", models.DefaultStallMax))
	fl.Var(&l.maxRecovery, "liveness-max-recovery", "longest tolerated time to grant the lock again after a fault")
	fl.Var(&l.maxEvents, "max-history-events",
		fmt.Sprintf("refuse a run whose history would exceed this many events (about %d bytes of memory each), stop one that does", harness.BytesPerEvent))
}

// apply sets the test's fields of the flags the user typed.
func (l *livenessFlags) apply(t *scenario.Test) {
	if l.minSuccess.set {
		t.Liveness.MinSuccess = &l.minSuccess.v
	}
	if l.minAttempts.set {
		t.Liveness.MinAttempts = int(l.minAttempts.v)
	}
	if l.maxStall.set {
		t.Liveness.StallMax = l.maxStall.v
	}
	if l.maxRecovery.set {
		t.Liveness.RecoveryMax = l.maxRecovery.v
	}
	if l.maxEvents.set {
		t.MaxHistoryEvents = l.maxEvents.v
	}
}

// runWatched runs a prepared test, showing its progress on the command's
// stderr when it takes a while.
func runWatched(cmd *cobra.Command, p *harness.Prepared) (scenario.Result, error) {
	errOut := cmd.ErrOrStderr()
	show := newRunProgress(errOut, isTerminal(errOut), time.Now)
	defer show.finish()
	return p.RunWatched(harness.Watch{Progress: show.update})
}

// shareFlag is a share between 0 and 1 (or a percentage).
type shareFlag struct {
	v   float64
	set bool
}

func (f *shareFlag) String() string { return strconv.FormatFloat(f.v, 'g', -1, 64) }
func (f *shareFlag) Type() string   { return "share" }
func (f *shareFlag) Set(s string) error {
	v, err := models.ParseMinSuccess(s)
	if err != nil {
		return err
	}
	f.v, f.set = *v, true
	return nil
}

// durationFlag is a positive duration.
type durationFlag struct {
	v   time.Duration
	set bool
}

func (f *durationFlag) String() string {
	if f.v == 0 {
		return ""
	}
	return f.v.String()
}
func (f *durationFlag) Type() string { return "duration" }
func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as 10s or 1m30s")
	}
	if d <= 0 {
		return fmt.Errorf("must be positive")
	}
	f.v, f.set = d, true
	return nil
}

// intFlag is an integer of at least min.
type intFlag struct {
	v, min int64
	set    bool
}

func (f *intFlag) String() string { return strconv.FormatInt(f.v, 10) }
func (f *intFlag) Type() string   { return "int" }
func (f *intFlag) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("want a whole number")
	}
	if n < f.min {
		return fmt.Errorf("must be at least %d", f.min)
	}
	f.v, f.set = n, true
	return nil
}
