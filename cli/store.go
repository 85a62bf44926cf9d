package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

// runName names the runs of a test in the store:
// <system>-<workload>-<storage>-<nemesis>-seed<N>, the nemesis being the
// schedule file's name when the faults came from one.
func runName(t scenario.Test, nemesisFile string) string {
	nem := t.Nemesis
	if nemesisFile != "" {
		nem = strings.TrimSuffix(filepath.Base(nemesisFile), filepath.Ext(nemesisFile))
	}
	return fmt.Sprintf("%s-%s-%s-%s-seed%d", t.System, t.Workload, t.Storage, strings.ReplaceAll(nem, ",", "+"), t.Seed)
}

// storeRun makes the directory of a new run named name in the store of runs
// (runs/<name>/<start time>) and says so when a run directory of that name
// from before the store kept every run was moved into it.
func storeRun(errOut io.Writer, name string, start time.Time) (string, error) {
	dir, moved, err := reports.NewStoreRun(reports.StoreDir, name, start)
	if moved != "" {
		fmt.Fprintf(errOut, "the earlier run directory %s is now %s (the store keeps every run)\n", filepath.Dir(moved), moved)
	}
	return dir, err
}

// recordRun points runs/latest at the run directory dir and writes the
// store's index page again, when dir is in the store. The run is written
// already: a failure here is said on errOut and does not change the exit code.
func recordRun(errOut io.Writer, dir string) {
	if _, err := reports.RecordRun(reports.StoreDir, dir); err != nil {
		fmt.Fprintf(errOut, "warning: the run directory %s is written, but the store's index or latest link is not: %v\n", dir, err)
	}
}
