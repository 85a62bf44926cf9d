package libmode

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/placement"
)

// DrawFaults is the random draw of Search: for each seed, one to three
// faults, each a pause right after a read in a critical section, a pause
// of a client at a moment, a holding cut of a client from the instances,
// a clock jump forwards of an instance, or a crash of an instance that
// restarts empty; their moments in the run's first half and their lengths
// scaled by lease (a quarter of it to twice it; a crash 1 to 100 ms). Every
// fault it draws has a schedule form, so that Shrink can shrink it.
func DrawFaults(cfg Config, lease time.Duration) func(seed uint64) []Fault {
	cfg, _ = cfg.withDefaults()
	return func(seed uint64) []Fault {
		r := rand.New(rand.NewPCG(seed, 0x6c6962)) // "lib"
		clients, instances := clientNames(cfg.Clients), instanceNames(cfg.Instances)
		at := func() time.Duration { return time.Duration(r.Int64N(int64(cfg.Duration/2) + 1)) }
		length := func() time.Duration { return lease/4 + time.Duration(r.Int64N(int64(2*lease-lease/4)+1)) }
		var out []Fault
		for range 1 + r.IntN(3) {
			switch r.IntN(5) {
			case 0:
				out = append(out, PauseInCriticalSection{After: at(), For: length()})
			case 1:
				out = append(out, PauseClient{Client: clients[r.IntN(len(clients))], At: at(), For: length()})
			case 2:
				out = append(out, Partition{At: at(), For: length(), Clients: []string{clients[r.IntN(len(clients))]}})
			case 3:
				out = append(out, ClockJump{Instance: instances[r.IntN(len(instances))], At: at(), By: length()})
			default:
				out = append(out, Crash{Instance: instances[r.IntN(len(instances))], At: at(),
					For: time.Millisecond + time.Duration(r.Int64N(int64(99*time.Millisecond)))})
			}
		}
		return out
	}
}

// SearchOptions tune Search.
type SearchOptions struct {
	// Lease is the library's lease (its lock's TTL): the scale of the
	// random faults and the timeout the guided pauses' lengths straddle.
	// Default 1 s.
	Lease time.Duration
	// Seeds is the number of random runs (seeds 1..Seeds). Default 20;
	// negative: none.
	Seeds int
	// Draw draws a seed's faults. Default DrawFaults(cfg, Lease).
	Draw func(seed uint64) []Fault
	// Guided bounds the guided search; NoGuided skips it.
	Guided   GuidedOptions
	NoGuided bool
	// Shrink tunes the shrinking of the first finding; NoShrink skips it.
	Shrink   ShrinkOptions
	NoShrink bool
	// Dir is where the finding's run directory is written (history.jsonl,
	// schedule.json, summary.txt, report.html, results.json); default a
	// directory of the test's t.TempDir, or $LIBMODE_REPORT_DIR/<test> when
	// that is set.
	Dir string
}

// Search is the whole search of a library, as for a built-in system:
// random runs by seed, then every guided placement of a single pause;
// the first run a safety check finds invalid (the guided search's first
// when it found any, a placement being easier to read than a draw) is
// shrunk, and its run directory written with the report. With
// LIBMODE_REPLAY set (a schedule file; LIBMODE_SEED, LIBMODE_CLIENTS and
// LIBMODE_DURATION beside it), Search runs that schedule alone instead:
// the replay line the report prints.
func Search(t *testing.T, cfg Config, opts SearchOptions) Report {
	t.Helper()
	if _, err := cfg.withDefaults(); err != nil {
		t.Fatal(err)
	}
	if opts.Lease <= 0 {
		opts.Lease = time.Second
	}
	if opts.Seeds == 0 {
		opts.Seeds = 20
	}
	if opts.Draw == nil {
		opts.Draw = DrawFaults(cfg, opts.Lease)
	}
	if opts.Guided.Timeouts == nil {
		opts.Guided.Timeouts = []placement.Timeout{{Name: "lease", D: opts.Lease}}
	}
	rep := Report{test: t.Name()}
	if path := os.Getenv("LIBMODE_REPLAY"); path != "" {
		r := replayFromEnv(t, cfg, path)
		rep.Finding = &r
		rep.write(t, opts.Dir, r)
		return rep
	}
	if opts.Seeds > 0 {
		rep.Random = Random(t, cfg, opts.Seeds, opts.Draw, false)
	}
	if !opts.NoGuided {
		rep.Guided = Guided(t, cfg, opts.Guided)
	}
	found := rep.Guided.Failing
	if len(found) == 0 {
		found = rep.Random.Failing
	}
	if len(found) == 0 {
		return rep
	}
	rep.Finding = &found[0]
	show := found[0]
	if !opts.NoShrink {
		s, err := Shrink(t, found[0], opts.Shrink)
		if err != nil {
			rep.ShrinkErr = err.Error()
		} else {
			rep.Shrunk = &s
			show = s.Result
		}
	}
	rep.write(t, opts.Dir, show)
	return rep
}

// replayFromEnv runs the schedule file path with the seed, clients and
// time of LIBMODE_SEED, LIBMODE_CLIENTS and LIBMODE_DURATION (each
// optional).
func replayFromEnv(t *testing.T, cfg Config, path string) Result {
	t.Helper()
	s, err := nemesis.ReadFile(path)
	if err != nil {
		t.Fatalf("libmode: LIBMODE_REPLAY: %v", err)
	}
	for _, v := range []struct {
		name string
		set  func(string) error
	}{
		{"LIBMODE_SEED", func(x string) error { _, err := fmt.Sscan(x, &cfg.Seed); return err }},
		{"LIBMODE_CLIENTS", func(x string) error { _, err := fmt.Sscan(x, &cfg.Clients); return err }},
		{"LIBMODE_DURATION", func(x string) (err error) { cfg.Duration, err = time.ParseDuration(x); return err }},
	} {
		if x := os.Getenv(v.name); x != "" {
			if err := v.set(x); err != nil {
				t.Fatalf("libmode: %s=%q: %v", v.name, x, err)
			}
		}
	}
	faults, err := FromSchedule(cfg, s)
	if err != nil {
		t.Fatalf("libmode: LIBMODE_REPLAY=%s: %v", path, err)
	}
	cfg.Faults = faults
	return Run(t, cfg)
}

// write writes r's run directory, with the line that replays it, into
// dir, or by default a directory of the test's t.TempDir (or
// $LIBMODE_REPORT_DIR/<test> when that is set), and keeps it in rep.Dir
// ("" when it could not: the error is logged, the search's findings stand).
func (rep *Report) write(t *testing.T, dir string, r Result) {
	t.Helper()
	if dir == "" {
		if root := os.Getenv("LIBMODE_REPORT_DIR"); root != "" {
			dir = filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_"))
		} else {
			dir = filepath.Join(t.TempDir(), "run")
		}
	}
	rep.Dir = dir
	if err := WriteReport(dir, r, rep.ReplayLine(r)); err != nil {
		t.Logf("libmode: the report of the finding was not written: %v", err)
		rep.Dir = ""
	}
}

// Report is what Search did and found.
type Report struct {
	test string
	// Random and Guided are the two searches.
	Random, Guided Searched
	// Finding is the run shrunk (nil: none failed); Shrunk what shrinking
	// made of it (nil when it was skipped or failed: ShrinkErr says why).
	Finding   *Result
	Shrunk    *Shrunk
	ShrinkErr string
	// Dir is the run directory written for the finding (the shrunk run
	// when there is one); "" when none was written.
	Dir string
}

// ReplayLine is the go test line that replays r through Search: the
// schedule file of its run directory, with its seed, clients and time.
func (rep Report) ReplayLine(r Result) string {
	dir := rep.Dir
	if dir == "" {
		dir = "DIR"
	}
	return fmt.Sprintf("LIBMODE_REPLAY=%s LIBMODE_SEED=%d LIBMODE_CLIENTS=%d LIBMODE_DURATION=%v go test -run '^%s$' .",
		filepath.Join(dir, "schedule.json"), r.Config.Seed, r.Config.Clients, r.Config.Duration, rep.test)
}

// Text is the report for a person: the searches, the finding, the
// shrunk schedule and the replay, and where the run directory is.
func (rep Report) Text() string {
	var b strings.Builder
	if rep.Random.Runs > 0 {
		b.WriteString(rep.Random.Line() + "\n")
	}
	if rep.Guided.Runs > 0 {
		b.WriteString(rep.Guided.Line() + "\n")
	}
	if rep.Finding == nil {
		b.WriteString("no run failed a safety check\n")
		return b.String()
	}
	show := *rep.Finding
	switch {
	case rep.Shrunk != nil:
		b.WriteString(rep.Shrunk.Report())
		show = rep.Shrunk.Result
	case rep.ShrinkErr != "":
		fmt.Fprintf(&b, "not shrunk: %s\n%s", rep.ShrinkErr, show.Summary())
	default:
		b.WriteString(show.Summary())
	}
	if rep.Dir != "" {
		fmt.Fprintf(&b, "run directory: %s (report.html)\n", rep.Dir)
		fmt.Fprintf(&b, "replay: %s\n", rep.ReplayLine(show))
	}
	return b.String()
}
