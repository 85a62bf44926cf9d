package engine

import (
	"slices"
	"strings"
)

// Peek is key's live value at now without touching the data set (an
// expired key is absent, as a command would find it, but stays until a
// command removes it): a string's value, a hash's field names sorted and
// joined by commas, a list's elements in order or a sorted set's members
// by rank, joined by commas; expireAt is its expiry in Unix milliseconds (0: none).
// The server's record of grants reads the keys a command touched with it,
// before and after the command.
func (db *DB) Peek(key string, now int64) (value string, expireAt int64, ok bool) {
	it := db.keys[key]
	if it == nil || (it.expireAt != 0 && now > it.expireAt) {
		return "", 0, false
	}
	switch it.kind {
	case kindHash:
		fields := slices.Clone(it.order)
		slices.Sort(fields)
		return strings.Join(fields, ","), it.expireAt, true
	case kindList:
		return strings.Join(it.list, ","), it.expireAt, true
	case kindZSet:
		return strings.Join(it.zset.sorted, ","), it.expireAt, true
	}
	return it.str, it.expireAt, true
}
