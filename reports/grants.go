package reports

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// ServersRecord is the servers' own record of the grants they made, in true
// time: what the lock service did, kept beside the history of what the
// clients saw (the simulator's lockapi.GrantLog, as a run hands it over).
// results.json carries it as "servers_record". A run that did not keep it (a
// live run, a history checked from a file, a sweep's run) has none, and its
// report says so rather than show an empty record.
type ServersRecord struct {
	// Quorum is how many scopes must hold grants to one owner at once for
	// it to hold the lock: Redlock's majority of instances; 1 otherwise.
	Quorum int `json:"quorum"`
	// End is when the record stops, the end of the run (ns of true time): a
	// grant still in force then was held to the end.
	End int64 `json:"end"`
	// Grants are the grants, in the order the servers made them.
	Grants []ServerGrant `json:"grants"`
}

// ServerGrant is one grant as the server that made it recorded it; times are
// ns of true time, 0 for "never".
type ServerGrant struct {
	// Scope is the lock state the grant lives in (one Redis deployment, one
	// Redlock instance, the raft group).
	Scope string `json:"scope,omitempty"`
	// Server is the node that granted it.
	Server string `json:"server"`
	// Key is the lock, Owner the value or acquirer id it was given to, and
	// Client the node that asked.
	Key    string `json:"key"`
	Owner  string `json:"owner"`
	Client string `json:"client"`
	// At is when the server granted it.
	At int64 `json:"at"`
	// Until is when the lease the server promised runs out, renewals
	// included (0: a lock without a lease).
	Until int64 `json:"until,omitempty"`
	// Released is when the owner gave it back (0: never).
	Released int64 `json:"released,omitempty"`
	// RemovedBy is the client that deleted the lock although it was not the
	// owner's (or the server that revoked it), and Removed when.
	RemovedBy string `json:"removed_by,omitempty"`
	Removed   int64  `json:"removed,omitempty"`
	// Revoked is true when the server itself ended the grant while its
	// owner held it.
	Revoked bool `json:"revoked,omitempty"`
}

// inForce is when the grant stopped protecting its owner: its release, its
// removal or its lease's end, whichever came first; end (the end of the
// record) when none did.
func (g ServerGrant) inForce(end int64) int64 {
	to := int64(math.MaxInt64)
	for _, t := range []int64{g.Until, g.Released, g.Removed} {
		if t > 0 {
			to = min(to, t)
		}
	}
	return min(to, max(end, g.At))
}

// broken reports whether the grant ended while its owner held it: the
// server revoked it, or another client deleted the lock before its lease ran
// out (a lock without a lease: before its owner released it).
func (g ServerGrant) broken() bool {
	if g.Revoked {
		return true
	}
	if g.RemovedBy == "" {
		return false
	}
	promise := int64(math.MaxInt64)
	for _, t := range []int64{g.Until, g.Released} {
		if t > 0 {
			promise = min(promise, t)
		}
	}
	return g.Removed < promise
}

// ended says how the grant ended, as the servers recorded it; end is the end
// of the record.
func (g ServerGrant) ended(end int64) string {
	switch {
	case g.Revoked:
		return fmt.Sprintf("revoked by %s at %s", g.RemovedBy, history.FormatTime(g.Removed))
	case g.RemovedBy != "":
		return fmt.Sprintf("removed by %s at %s", g.RemovedBy, history.FormatTime(g.Removed))
	case g.Released > 0:
		return "released at " + history.FormatTime(g.Released)
	case g.Until > 0 && g.Until <= end:
		return "lease ran out at " + history.FormatTime(g.Until)
	}
	return "held to the end"
}

// Caps on the table of grants: a record up to shownGrants rows is shown
// whole; a longer one shows the grants in force during the counterexamples
// of the invalid verdicts (up to maxGrantRows), or else its first
// shownGrants.
const (
	shownGrants  = 30
	maxGrantRows = 100
)

// grantsView is the servers' record as the page shows it.
type grantsView struct {
	// Kept is false for a run that did not keep the record.
	Kept   bool
	Quorum int
	Rows   []grantRow
	// Total is the number of grants in the record; More those not shown;
	// Broken the rows shown of grants removed by another client or revoked.
	Total, More, Broken int
	// Shown says which rows are shown when not all are ("" when all are).
	Shown string
}

// grantRow is one grant as the table shows it.
type grantRow struct {
	Server, Key, Owner, Client string
	Granted, Until, Ended      string
	// Broken marks a grant that ended while its owner held it (broken).
	Broken bool
}

// newGrantsView picks the rows of the record to show: all of a short
// record; of a long one, those in force during the time spanned by the
// events of an invalid verdict's counterexample, or else the first ones.
func newGrantsView(rec *ServersRecord, verdicts []models.Verdict) grantsView {
	if rec == nil {
		return grantsView{}
	}
	gv := grantsView{Kept: true, Quorum: rec.Quorum, Total: len(rec.Grants)}
	shown := rec.Grants
	if len(shown) > shownGrants {
		windows, checks := cxWindows(verdicts)
		var in []ServerGrant
		for _, g := range rec.Grants {
			if overlapsAny(g.At, g.inForce(rec.End), windows) {
				in = append(in, g)
			}
		}
		var during string
		if len(in) > 0 {
			noun := "counterexample"
			if len(checks) > 1 {
				noun += "s"
			}
			during = fmt.Sprintf("in force during the %s of %s (%s)", noun, listing(checks), spans(windows))
		}
		switch {
		case len(in) == 0:
			shown = shown[:shownGrants]
			gv.Shown = fmt.Sprintf("the first %d", shownGrants)
		case len(in) > maxGrantRows:
			shown = in[:maxGrantRows]
			gv.Shown = fmt.Sprintf("the first %d of the %d %s", maxGrantRows, len(in), during)
		default:
			shown = in
			gv.Shown = fmt.Sprintf("the %s %s", history.Plural(len(in), "grant", ""), during)
		}
	}
	gv.More = gv.Total - len(shown)
	for _, g := range shown {
		row := grantRow{Server: g.Server, Key: g.Key, Owner: g.Owner, Client: g.Client,
			Granted: history.FormatTime(g.At), Until: "no lease", Ended: g.ended(rec.End), Broken: g.broken()}
		if g.Until > 0 {
			row.Until = history.FormatTime(g.Until)
		}
		if row.Broken {
			gv.Broken++
		}
		gv.Rows = append(gv.Rows, row)
	}
	return gv
}

// cxSpan is a stretch of true time (ns), both ends included.
type cxSpan struct{ from, to int64 }

// cxWindows are the stretches of time the events of the invalid verdicts'
// counterexamples span, merged where they overlap, in order, and the checks
// whose counterexamples they are.
func cxWindows(verdicts []models.Verdict) ([]cxSpan, []string) {
	var ws []cxSpan
	var checks []string
	for _, v := range verdicts {
		if v.Result != models.Invalid || v.Counterexample == nil || len(v.Counterexample.Events) == 0 {
			continue
		}
		w := cxSpan{math.MaxInt64, math.MinInt64}
		for _, e := range v.Counterexample.Events {
			w.from, w.to = min(w.from, e.Time), max(w.to, e.Time)
		}
		ws = append(ws, w)
		checks = append(checks, v.Check)
	}
	slices.SortFunc(ws, func(a, b cxSpan) int { return cmp.Compare(a.from, b.from) })
	var out []cxSpan
	for _, w := range ws {
		if n := len(out); n > 0 && w.from <= out[n-1].to {
			out[n-1].to = max(out[n-1].to, w.to)
			continue
		}
		out = append(out, w)
	}
	return out, checks
}

// overlapsAny reports whether [from, to] meets one of the windows.
func overlapsAny(from, to int64, windows []cxSpan) bool {
	for _, w := range windows {
		if from <= w.to && to >= w.from {
			return true
		}
	}
	return false
}

// spans renders windows as "24.303s to 35.445s", joined by commas.
func spans(windows []cxSpan) string {
	var parts []string
	for _, w := range windows {
		parts = append(parts, history.FormatTime(w.from)+" to "+history.FormatTime(w.to))
	}
	return strings.Join(parts, ", ")
}
