package reports

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// IndexEntry is one run as the store's index page lists it.
type IndexEntry struct {
	// Dir is the run directory, relative to the store, with slashes.
	Dir string
	// Started is when the run started: from the directory's name in the
	// store's layout, else when its results.json was written.
	Started time.Time
	// System, Workload, Storage, Seed and Command are the run's, from results.json.
	System, Workload, Storage string
	Seed                      uint64
	Command                   string
	// Faults say which faults fired, a kind an entry, the most frequent
	// first ("3 pause", "1 crash"); "none", or "none fired (N scheduled)".
	Faults []string
	// Overall is the run's verdict ("valid", "invalid", "unknown", or "" for
	// a history without verdicts), ExitCode its exit code, Failed the checks
	// that were not valid.
	Overall  string
	ExitCode int
	Failed   []string
	// Live: the run ran against real servers in real time.
	Live bool
	// Expected is what the scenario the run staged expects of it (nil: a
	// run of no scenario).
	Expected *Expected
	// Report is the report page, relative to the store ("" when the run
	// directory has none).
	Report string
}

// indexResults is what the index reads of a results.json.
type indexResults struct {
	Command string `json:"command"`
	Seed    uint64 `json:"seed"`
	Config  struct {
		System   string `json:"system"`
		Workload string `json:"workload"`
		Storage  string `json:"storage"`
	} `json:"config"`
	Overall  string `json:"overall"`
	ExitCode int    `json:"exit_code"`
	Verdicts []struct {
		Check  string `json:"check"`
		Result string `json:"result"`
	} `json:"verdicts"`
	Summary struct {
		Faults map[string]int `json:"faults"`
	} `json:"summary"`
	Faults   *Faults                    `json:"faults"`
	Expected *Expected                  `json:"expected"`
	Files    map[string]string          `json:"files"`
	Extra    map[string]json.RawMessage `json:"extra"`
}

// ScanStore lists the run directories under store (every directory holding
// results.json; symbolic links such as latest and hidden directories, a
// write in progress among them, are not followed), newest first. A
// results.json that cannot be read is listed with what is known of it.
func ScanStore(store string) ([]IndexEntry, error) {
	var out []IndexEntry
	err := filepath.WalkDir(store, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == store {
				return err
			}
			return nil // a directory that vanished or cannot be read is not a run
		}
		if !d.IsDir() {
			return nil
		}
		if path != store && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, ResultsFile)); err != nil {
			return nil
		}
		rel, err := filepath.Rel(store, path)
		if err != nil || rel == "." {
			return nil
		}
		out = append(out, indexEntry(path, filepath.ToSlash(rel)))
		return filepath.SkipDir // a run directory holds no run directory
	})
	if err != nil {
		return nil, fmt.Errorf("read the store of runs %s: %w", store, err)
	}
	slices.SortStableFunc(out, func(a, b IndexEntry) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return strings.Compare(a.Dir, b.Dir)
	})
	return out, nil
}

// indexEntry reads one run directory.
func indexEntry(path, rel string) IndexEntry {
	e := IndexEntry{Dir: rel, Faults: []string{"?"}}
	results := filepath.Join(path, ResultsFile)
	if st, err := os.Stat(results); err == nil {
		e.Started = st.ModTime()
	}
	if t, ok := storeTime(filepath.Base(path)); ok {
		e.Started = t
	}
	b, err := os.ReadFile(results)
	if err != nil {
		return e
	}
	var r indexResults
	if err := json.Unmarshal(b, &r); err != nil {
		return e
	}
	e.System, e.Workload, e.Storage = r.Config.System, r.Config.Workload, r.Config.Storage
	e.Seed, e.Command, e.Overall, e.ExitCode = r.Seed, r.Command, r.Overall, r.ExitCode
	for _, v := range r.Verdicts {
		if v.Result != "valid" {
			e.Failed = append(e.Failed, v.Check)
		}
	}
	_, e.Live = r.Extra["live"]
	e.Expected = r.Expected
	e.Faults = faultsFired(r)
	report := r.Files[reportLabel]
	if report == "" {
		report = ReportFile
	}
	if _, err := os.Stat(filepath.Join(path, report)); err == nil {
		e.Report = rel + "/" + report
	}
	return e
}

// faultsFired says which faults took effect, by kind, the most frequent first.
func faultsFired(r indexResults) []string {
	fired := r.Summary.Faults
	scheduled := 0
	if r.Faults != nil {
		fired = r.Faults.Fired
		for _, n := range r.Faults.Scheduled {
			scheduled += n
		}
	}
	kinds := make([]string, 0, len(fired))
	for k, n := range fired {
		if n > 0 {
			kinds = append(kinds, k)
		}
	}
	slices.SortFunc(kinds, func(a, b string) int {
		if fired[a] != fired[b] {
			return fired[b] - fired[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", fired[k], k))
	}
	switch {
	case len(parts) > 0:
		return parts
	case scheduled > 0:
		return []string{fmt.Sprintf("none fired (%d scheduled)", scheduled)}
	}
	return []string{"none"}
}

// WriteIndex writes store/index.html, the page listing every run of the
// store (ScanStore), atomically: a reader never sees half a page. It returns
// the number of runs listed.
func WriteIndex(store string) (int, error) {
	entries, err := ScanStore(store)
	if err != nil {
		return 0, err
	}
	latest := ""
	if target, err := os.Readlink(filepath.Join(store, LatestLink)); err == nil {
		latest = filepath.ToSlash(filepath.Clean(target))
	}
	err = WriteFileAtomic(filepath.Join(store, IndexFile), func(w io.Writer) error {
		return RenderIndex(w, entries, latest)
	})
	return len(entries), err
}

// RenderIndex writes the index page of entries; latest is the run the
// store's latest link names ("" for none).
func RenderIndex(w io.Writer, entries []IndexEntry, latest string) error {
	type row struct {
		IndexEntry
		Date, Time, Result string
		// Badge is the badge's colour: Result, or "expected" for a run
		// whose verdicts are what its scenario expects; Said says so, or
		// that they are not, or what exit code 5 means.
		Badge string
		Said  []string
		// Surprise: the run is not as its scenario expects.
		Surprise bool
		Latest   bool
	}
	var rows []row
	var expected, surprises, plain []string
	for _, e := range entries {
		result := e.Overall
		if result == "" {
			result = "not checked"
		}
		r := row{IndexEntry: e, Date: e.Started.UTC().Format("2006-01-02"), Time: e.Started.UTC().Format("15:04:05"),
			Result: result, Badge: result, Latest: e.Dir == latest}
		switch {
		case e.Expected != nil && e.Expected.Match:
			r.Badge = "expected"
			r.Said = append(r.Said, "as "+e.Expected.Name()+" expects")
			expected = append(expected, result)
		case e.Expected != nil:
			r.Surprise = true
			r.Said = append(r.Said, "NOT as "+e.Expected.Name()+" expects")
			surprises = append(surprises, result)
		default:
			plain = append(plain, result)
		}
		if e.ExitCode == ExitDataSafe {
			r.Said = append(r.Said, "the lock broke, the data is safe (exit 5)")
		}
		rows = append(rows, r)
	}
	var tally []string
	if n := len(surprises); n > 0 {
		tally = append(tally, fmt.Sprintf("%d not as %s scenario expects (%s)", n, plural(n, "its", "their"), countResults(surprises)))
	}
	if n := len(expected); n > 0 {
		tally = append(tally, fmt.Sprintf("%d as %s scenario expects (%s)", n, plural(n, "its", "their"), countResults(expected)))
	}
	if n := len(plain); n > 0 && n < len(rows) {
		tally = append(tally, fmt.Sprintf("%d of no scenario (%s)", n, countResults(plain)))
	} else if n > 0 {
		tally = append(tally, countResults(plain))
	}
	return indexTemplate.Execute(w, map[string]any{"Rows": rows, "Count": len(rows), "Tally": strings.Join(tally, "; ")})
}

// countResults counts results, the alarming first: "2 invalid, 1 valid".
func countResults(results []string) string {
	counts := map[string]int{}
	for _, r := range results {
		counts[r]++
	}
	var parts []string
	for _, r := range []string{"invalid", "unknown", "valid", "not checked"} {
		if counts[r] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[r], r))
		}
	}
	return strings.Join(parts, ", ")
}

// plural is one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// breakable lets a run directory's path break after each slash and hyphen.
func breakable(path string) template.HTML {
	esc := template.HTMLEscapeString(path)
	esc = strings.ReplaceAll(esc, "/", "/<wbr>")
	return template.HTML(strings.ReplaceAll(esc, "-", "-<wbr>"))
}

var indexTemplate = template.Must(template.New("index").Funcs(template.FuncMap{
	"upper": strings.ToUpper, "breakable": breakable, "join": strings.Join,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>locklab runs ({{.Count}})</title>
<style>
:root { --valid: #1a7f37; --invalid: #c62828; --unknown: #b26a00; --muted: #57606a; --line: #d0d7de; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "Liberation Sans", Arial, sans-serif; color: #1f2328; background: #f6f8fa; }
header { background: #24292f; color: #fff; padding: 16px 24px; }
header .inner, main { max-width: 1240px; margin: 0 auto; }
header h1 { font-size: 22px; margin: 0 0 2px; }
header p { margin: 0; opacity: .9; font-size: 14px; }
main { padding: 0 16px 48px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin: 16px 0; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid #eaeef2; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.when { white-space: nowrap; font-variant-numeric: tabular-nums; }
td.when span, .sub { display: block; color: var(--muted); font-size: 12.5px; }
td.name, .fault { white-space: nowrap; hyphens: none; }
td.dir { font-family: ui-monospace, "Liberation Mono", monospace; font-size: 12.5px; min-width: 15em; }
.badge { display: inline-block; min-width: 70px; text-align: center; color: #fff; font-weight: 700; border-radius: 4px; padding: 1px 8px; font-size: 13px; white-space: nowrap; }
.badge.valid { background: var(--valid); } .badge.invalid { background: var(--invalid); }
.badge.unknown, .badge.not-checked { background: var(--unknown); }
.badge.expected { background: #34495e; }
.said { display: block; font-size: 12.5px; margin-top: 2px; max-width: 20em; white-space: normal; overflow-wrap: anywhere; color: #34495e; font-weight: 600; }
.said.surprise { color: var(--invalid); }
tr.surprise td { background: #fff0f0; }
.failed { display: block; color: var(--muted); font-size: 12.5px; margin-top: 2px; white-space: nowrap; }
.tag { font-size: 12px; color: var(--muted); border: 1px solid var(--line); border-radius: 4px; padding: 0 4px; white-space: nowrap; }
.tag.latest { color: #0969da; border-color: #0969da; }
tr.latest td { background: #f0f6ff; }
.note { color: var(--muted); font-size: 13px; }
a { color: #0969da; }
</style>
</head>
<body>
<header><div class="inner">
 <h1>locklab runs</h1>
 <p>{{.Count}} run{{if ne .Count 1}}s{{end}}{{if .Tally}}: {{.Tally}}{{end}} · newest first · each run's report is linked from its directory</p>
</div></header>
<main>
<section>
{{if .Rows}}
<table id="runs">
 <tr><th>started (UTC)</th><th>verdict</th><th>system</th><th>workload<span class="sub">storage</span></th><th>faults fired</th><th class="num">seed</th><th>run directory (report)</th></tr>
 {{range .Rows}}<tr class="run{{if .Latest}} latest{{end}}{{if .Surprise}} surprise{{end}}" data-dir="{{.Dir}}" data-verdict="{{.Result}}"{{if .Expected}} data-expected="{{if .Surprise}}no{{else}}yes{{end}}"{{end}}>
  <td class="when">{{.Date}}<span>{{.Time}}</span></td>
  <td class="name"><span class="badge {{if eq .Badge "not checked"}}not-checked{{else}}{{.Badge}}{{end}}">{{upper .Result}}</span>{{$s := .Surprise}}{{range .Said}}<span class="said{{if $s}} surprise{{end}}">{{.}}</span>{{end}}{{range .Failed}}<span class="failed">{{.}}</span>{{end}}</td>
  <td class="name">{{.System}}{{if .Live}} <span class="tag">live</span>{{end}}</td>
  <td class="name">{{.Workload}}<span class="sub">{{.Storage}}</span></td>
  <td>{{range $i, $f := .Faults}}{{if $i}}, {{end}}<span class="fault">{{$f}}</span>{{end}}</td>
  <td class="num">{{.Seed}}</td>
  <td class="dir">{{if .Report}}<a href="{{.Report}}" title="{{.Command}}">{{breakable .Dir}}</a>{{else}}<span title="{{.Command}}">{{breakable .Dir}}</span> <span class="note">(no report)</span>{{end}}{{if .Latest}} <span class="tag latest">latest</span>{{end}}</td>
 </tr>
 {{end}}
</table>
{{else}}
<p class="note">No run directory yet: <code>locklab run</code> writes one here.</p>
{{end}}
</section>
<p class="note">Written by locklab after each run, and by <code>locklab report --index</code>. Hover a run directory for the command that replays it.</p>
</main>
</body>
</html>
`))
