package live

import (
	"time"

	"github.com/locklab/locklab/storage"
	store "github.com/locklab/locklab/storage/live"
)

// lateWriteNotes says what became of each write that reached the storage
// after its client had given up on it (storage.LateWriteNotes: the
// simulator tells them alike).
func lateWriteNotes(late []store.LateWrite, start, end time.Duration) []string {
	return storage.LateWriteNotes(late, start, end)
}
