package engine

// cmdGetRange is GETRANGE key start end (and its old name SUBSTR): the
// bytes of a string from start to end inclusive, negative offsets counted
// from the end, clamped to the string; "" for a missing key. As
// redis-server 7.0, the offsets are read before the key, and two negative
// offsets with start > end answer "".
func cmdGetRange(db *DB, now int64, args []string, _ string) Reply {
	start, ok1 := parseInt(args[1])
	end, ok2 := parseInt(args[2])
	if !ok1 || !ok2 {
		return errNotInteger
	}
	it := db.lookup(args[0], now)
	switch {
	case it == nil:
		return ""
	case it.kind != kindString:
		return errWrongType
	}
	n := int64(len(it.str))
	if start < 0 && end < 0 && start > end {
		return ""
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		return ""
	}
	return it.str[start : end+1]
}
