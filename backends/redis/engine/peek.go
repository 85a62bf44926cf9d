package engine

import (
	"slices"
	"strings"
)

// Peek is key's live value at now without touching the data set (an
// expired key is absent, as a command would find it, but stays until a
// command removes it): a string's value, or a hash's field names sorted and
// joined by commas; expireAt is its expiry in Unix milliseconds (0: none).
// The server's record of grants reads the keys a command touched with it,
// before and after the command.
func (db *DB) Peek(key string, now int64) (value string, expireAt int64, ok bool) {
	it := db.keys[key]
	if it == nil || (it.expireAt != 0 && now > it.expireAt) {
		return "", 0, false
	}
	if it.kind == kindHash {
		fields := make([]string, 0, len(it.hash))
		for f := range it.hash { // determinism:ok: sorted below
			fields = append(fields, f)
		}
		slices.Sort(fields)
		return strings.Join(fields, ","), it.expireAt, true
	}
	return it.str, it.expireAt, true
}
