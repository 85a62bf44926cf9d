package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/jsonerr"
	"github.com/locklab/locklab/models"
)

// Written lists the files a report wrote into a run directory.
type Written struct {
	// Report is the report's file name (report.html).
	Report string
	// Plots are the plot files (name.png and name.svg).
	Plots []string
}

// WriteReport renders report.html and the plots of r into dir. files maps the
// labels of the run directory's other files to their names, for the report's
// links (labels starting with PorcupinePrefix are linked from the verdicts).
// The same run always gives the same bytes.
func WriteReport(dir string, r Run, files map[string]string) (Written, error) {
	v := newView(r.Events)
	plots, err := renderPlots(v)
	if err != nil {
		return Written{}, err
	}
	if err := writePlots(dir, plots); err != nil {
		return Written{}, err
	}
	w := Written{Report: ReportFile}
	produced := map[string]bool{}
	for _, p := range plots {
		produced[p.Name] = true
		w.Plots = append(w.Plots, p.Name+".png", p.Name+".svg")
	}
	// A plot the run did not produce (no overlap: no close-up) must not be
	// left over from an earlier run in the same directory.
	for _, name := range []string{OverlapTimelinePlot} {
		if !produced[name] {
			for _, ext := range []string{".png", ".svg"} {
				if err := os.Remove(filepath.Join(dir, name+ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return Written{}, fmt.Errorf("remove stale plot: %w", err)
				}
			}
		}
	}
	err = WriteFileAtomic(filepath.Join(dir, ReportFile), func(wr io.Writer) error {
		return writeHTML(wr, r, v, plots, files)
	})
	return w, err
}

// ReadDir reads a stored run directory: results.json (its verdicts, command,
// configuration and figures), the history and the schedule. It also returns
// the directory's files by label, as listed in results.json. A directory with
// a history but no results.json reads as a run without verdicts.
func ReadDir(dir string) (Run, map[string]string, error) {
	var res Results
	b, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.Files = map[string]string{"history": HistoryFile}
	case err != nil:
		return Run{}, nil, fmt.Errorf("read run directory: %w", err)
	default:
		if err := json.Unmarshal(b, &res); err != nil {
			return Run{}, nil, fmt.Errorf("%s: %w", filepath.Join(dir, ResultsFile), jsonerr.Plain(err))
		}
		if res.Format != "locklab-results" {
			return Run{}, nil, fmt.Errorf("%s: field \"format\" is %q, want \"locklab-results\"", filepath.Join(dir, ResultsFile), res.Format)
		}
	}
	r := res.Run
	r.Faults = res.Faults
	hist := HistoryFile
	if name := res.Files["history"]; name != "" {
		hist = name
	}
	if r.Events, err = history.ReadFile(filepath.Join(dir, hist)); err != nil {
		return Run{}, nil, fmt.Errorf("read run directory: %w", err)
	}
	if b == nil {
		r.Summary = models.Summarize(r.Events)
	} else if res.Files["results"] == "" {
		res.Files["results"] = ResultsFile // written before results.json listed itself
	}
	if name := res.Files["schedule"]; name != "" {
		sb, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return Run{}, nil, fmt.Errorf("read run directory: %w", err)
		}
		if err := json.Unmarshal(sb, &r.Schedule); err != nil {
			return Run{}, nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), jsonerr.Plain(err))
		}
	}
	return r, res.Files, nil
}

// Regenerate rewrites report.html and the plots of a stored run directory
// from its results.json, history and schedule.
func Regenerate(dir string) (Written, error) {
	r, files, err := ReadDir(dir)
	if err != nil {
		return Written{}, err
	}
	return WriteReport(dir, r, files)
}
