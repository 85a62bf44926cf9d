// Package reports writes what a person reads after a run: the run directory
// (history.jsonl, results.json, schedule.json, summary.txt, report.html and
// its plots) and the verdict summary printed on the terminal.
//
// reports knows nothing about the simulator or the harness: it is given a Run
// (the command that replays it, the configuration, the schedule, the history,
// the verdicts) and renders it. Every file is written atomically (a temporary
// file in the same directory, then a rename), so an interrupted run never
// leaves a half-written result, and a rerun into the same directory replaces
// files whole.
//
// # The report
//
// WriteDir writes report.html beside the other files; Regenerate rewrites it
// and the plots from a stored run directory (ReadDir reads one back), so a
// history checked outside a run gets a report too. The page reads from the
// top: the overall verdict and one sentence on what it means, each check's
// verdict with its reason, the replay command, the lock timeline, the
// counterexample in words with the events that show it, what the servers
// granted (the servers' own record of grants, Run.ServersRecord, or a
// sentence saying the run did not keep it), latency and
// throughput plots, summary statistics (acquire success, latency quantiles per
// function and outcome, throughput, messages per acquisition when the run
// recorded network counters), the fault schedule and the faults as they
// happened, the configuration, and links to the directory's files (a
// Porcupine visualization among them when an attachment's label starts with
// "porcupine:").
//
// The plots, each written as name.png and name.svg with gonum.org/v1/plot:
//
//   - timeline: one row per client, a bar for each interval in which it
//     believed it held the lock (models.Holdings), orange once its own lease
//     deadline had passed, red where two clients believed it at once
//     (models.Overlaps), marks for its storage writes (applied, rejected,
//     unknown), and the faults that hit it shaded on its row, over the row
//     stripes; faults that hit a server (or the storage, or the whole
//     network) are shaded and labelled in that node's lane above the
//     clients. No fault is drawn in a holding's colours: the faults of one
//     kind that overlap on one lane are merged into one band (one label,
//     a thin line at each fault's start), so no number of them shades a
//     lane like the red of two holders. Beyond 40 clients, those in an overlap or hit by a fault keep
//     a row and the rest are drawn as one density band (how many of them
//     held the lock at once);
//   - timeline-overlap: the same around the first overlap, when there is one;
//   - latency-raw: every operation's latency at its invoke time, log scale
//     fitted to the latencies drawn (not rounded up to a power of ten),
//     colour by function, marker by outcome (ok, fail, info);
//   - latency-quantiles: p50, p95, p99 and max per window and function;
//   - rate: completed operations per second per window, by function and
//     outcome.
//
// The latency and throughput plots shade the faults across the data area,
// one band per run of overlapping faults of a kind, each labelled once in a
// strip above the data where its label fits before the next band.
//
// # Invariants
//
//   - Deterministic: the same run gives the same bytes, for every plot and
//     for report.html; a report regenerated from the run directory is
//     identical to the one the run wrote.
//   - Self-contained: report.html embeds its plots as data URIs and its style
//     and script inline; it loads nothing from the network.
//   - One notation: every duration is printed as history.FormatDuration
//     does (104.6ms, 10.005s), every time as history.FormatTime (24.305s).
//   - Bounded: the timeline's height does not grow past 40 client rows and
//     8 server lanes; plots merge what a reader could not tell apart (scatter points
//     of one series within a glyph of each other, timeline bars closer than a
//     pixel, marks within half a mark), the scatter draws at most
//     maxScatterPoints points, and every table is capped; what was merged or
//     left out is said on the page.
//
// Package browser (reports/browser) opens a report in headless Chromium,
// screenshots it and reads back what it rendered.
package reports
