package live

import (
	"github.com/locklab/locklab/liveform"

	"github.com/locklab/locklab/history"
)

// ErrNotLive marks a test that cannot run live as given: a fault the live
// system cannot perform, an option its real server or library cannot
// honour. `repro --live --all` skips such a variant, naming the reason.
var ErrNotLive = liveform.ErrNotLive

// systemEvent records something a real server did by itself (a lease
// expiry, a session expiry), as the simulator records its servers' events:
// an instantaneous window of the nemesis process, at the time locklab saw
// it.
func (r *run) systemEvent(f string, targets []string, detail string) {
	if r.stopped() {
		return
	}
	for _, t := range []history.Type{history.Start, history.Stop} {
		r.log.AppendStamped(history.Event{Process: history.NemesisProcess, Type: t, F: f, Targets: targets, Detail: detail},
			func(e *history.Event) { e.Time = int64(r.now()) })
	}
}
