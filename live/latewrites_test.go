package live

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	store "github.com/locklab/locklab/storage/live"
)

func TestLateWriteNotesSayWhatBecameOfAWriteItsClientGaveUpOn(t *testing.T) {
	const start, end = 2 * time.Second, 30 * time.Second
	sent := start + 214*time.Millisecond
	landed := sent + 15*time.Second
	late := store.LateWrite{Client: "c1", Key: "k", Value: 2, Token: 4, Sent: sent, Landed: landed}
	with := func(f func(w *store.LateWrite)) []store.LateWrite {
		w := late
		f(&w)
		return []store.LateWrite{w}
	}
	const head = `c1's write of 2 to "k" with token 4, sent at 0.214s and given up on by its client, reached the storage at 15.214s (15s after it was sent)`
	const unseen = "no read saw it, so the history is the same as if it had never landed and no check can tell it landed"
	for _, tc := range []struct {
		name string
		late []store.LateWrite
		want []string
	}{
		{"no late write, no note", nil, nil},
		{"overwritten before any read: unseen", with(func(w *store.LateWrite) {
			w.Overwritten, w.By, w.ByValue, w.OverwrittenAt = true, "c1", 113, landed+42*time.Millisecond
		}), []string{head + " and was applied, then replaced by c1's write of 113 at 15.256s before any read: " + unseen}},
		{"read, then overwritten: the history shows it", with(func(w *store.LateWrite) {
			w.Reads, w.Overwritten, w.By, w.ByValue, w.OverwrittenAt = 1, true, "c2", 3, landed+time.Second
		}), []string{head + " and was read 1 time(s) before c2's write of 3 replaced it at 16.214s"}},
		{"read and still in force", with(func(w *store.LateWrite) { w.Reads = 2 }),
			[]string{head + " and was read 2 time(s); it was still in force when the run ended"}},
		{"never read nor replaced: unseen", with(func(*store.LateWrite) {}),
			[]string{head + " and was applied, and still in force and unread when the run ended: " + unseen}},
		{"refused by the fence", with(func(w *store.LateWrite) { w.Refused = true }),
			[]string{head + " and was refused by the fencing rule"}},
		{"landed after the run stopped: not told", with(func(w *store.LateWrite) { w.Landed = start + end + time.Millisecond }), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, lateWriteNotes(tc.late, start, end))
		})
	}
}
