package live

import (
	"fmt"
	"time"

	store "github.com/locklab/locklab/storage/live"
)

// lateWriteNotes says, for each write that reached the storage after its
// client had given up on it (a write delayed past the client's timeout),
// when it landed and what became of it, on the run's clock (start is the
// net time the run started at; a write that landed after end, when the run
// stopped, is not told: the history ends before it). A late write nobody
// read leaves a history that is the same as if it had never landed: without
// the note, a valid verdict would not say that the fault did land the write.
func lateWriteNotes(late []store.LateWrite, start, end time.Duration) []string {
	at := func(d time.Duration) string { return fmt.Sprintf("%.3fs", (d - start).Seconds()) }
	var out []string
	for _, w := range late {
		if w.Landed-start > end {
			continue
		}
		s := fmt.Sprintf("%s's write of %d to %q", w.Client, w.Value, w.Key)
		if w.Token != 0 {
			s += fmt.Sprintf(" with token %d", w.Token)
		}
		s += fmt.Sprintf(", sent at %s and given up on by its client, reached the storage at %s (%v after it was sent)",
			at(w.Sent), at(w.Landed), (w.Landed - w.Sent).Round(time.Millisecond))
		switch {
		case w.Refused:
			s += " and was refused by the fencing rule"
		case w.Reads > 0 && w.Overwritten:
			s += fmt.Sprintf(" and was read %d time(s) before %s's write of %d replaced it at %s", w.Reads, w.By, w.ByValue, at(w.OverwrittenAt))
		case w.Reads > 0:
			s += fmt.Sprintf(" and was read %d time(s); it was still in force when the run ended", w.Reads)
		case w.Overwritten:
			s += fmt.Sprintf(" and was applied, then replaced by %s's write of %d at %s before any read: "+
				"no read saw it, so the history is the same as if it had never landed and no check can tell it landed",
				w.By, w.ByValue, at(w.OverwrittenAt))
		default:
			s += " and was applied, and still in force and unread when the run ended: " +
				"no read saw it, so the history is the same as if it had never landed and no check can tell it landed"
		}
		out = append(out, s) // no full stop, as every warning: the report adds one
	}
	return out
}
