package engine

// listOf is key's list (nil when missing), or WRONGTYPE.
func (db *DB) listOf(key string, now int64) (*item, *Error) {
	it := db.lookup(key, now)
	if it != nil && it.kind != kindList {
		return nil, errWrongType
	}
	return it, nil
}

// cmdRPush is RPUSH key element...: appends, answers the new length.
func cmdRPush(db *DB, now int64, args []string, _ string) Reply {
	it, err := db.listOf(args[0], now)
	if err != nil {
		return err
	}
	if it == nil {
		it = &item{kind: kindList}
		db.keys[args[0]] = it
	}
	it.list = append(it.list, args[1:]...)
	return int64(len(it.list))
}

// cmdLPop is LPOP key [count]: the first element (nil for a missing key),
// or with count an array of up to count elements (a nil array for a
// missing key, an empty one for count 0). An emptied list is deleted.
func cmdLPop(db *DB, now int64, args []string, _ string) Reply {
	if len(args) > 2 {
		return arityError("lpop")
	}
	var count int64
	if len(args) == 2 {
		n, ok := parseInt(args[1])
		if !ok || n < 0 {
			return errorf("ERR value is out of range, must be positive")
		}
		count = n
	}
	it, err := db.listOf(args[0], now)
	switch {
	case err != nil:
		return err
	case it == nil:
		return nil
	case len(args) == 2 && count == 0:
		return []Reply{}
	}
	var out Reply
	if len(args) == 1 {
		out = it.list[0]
		it.list = it.list[1:]
	} else {
		n := min(count, int64(len(it.list)))
		popped := make([]Reply, n)
		for i := range popped {
			popped[i] = it.list[i]
		}
		it.list = it.list[n:]
		out = popped
	}
	if len(it.list) == 0 {
		delete(db.keys, args[0])
	}
	return out
}

// cmdLIndex is LINDEX key index: the element at index (negative from the
// end), nil when out of range or missing. As redis-server 7.0, the key's
// type is checked before the index is read.
func cmdLIndex(db *DB, now int64, args []string, _ string) Reply {
	it, err := db.listOf(args[0], now)
	switch {
	case err != nil:
		return err
	case it == nil:
		return nil
	}
	i, ok := parseInt(args[1])
	if !ok {
		return errNotInteger
	}
	if i < 0 {
		i += int64(len(it.list))
	}
	if i < 0 || i >= int64(len(it.list)) {
		return nil
	}
	return it.list[i]
}

// rankRange clamps start and end (inclusive, negative from the end) to a
// sequence of n elements as redis-server does for LRANGE and ZRANGE; ok is
// false when the range is empty.
func rankRange(start, end, n int64) (int64, int64, bool) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start = max(start, 0)
	if start > end || start >= n {
		return 0, 0, false
	}
	return start, min(end, n-1), true
}

// cmdLRange is LRANGE key start stop.
func cmdLRange(db *DB, now int64, args []string, _ string) Reply {
	start, ok1 := parseInt(args[1])
	end, ok2 := parseInt(args[2])
	if !ok1 || !ok2 {
		return errNotInteger
	}
	it, err := db.listOf(args[0], now)
	switch {
	case err != nil:
		return err
	case it == nil:
		return []Reply{}
	}
	start, end, ok := rankRange(start, end, int64(len(it.list)))
	if !ok {
		return []Reply{}
	}
	out := make([]Reply, 0, end-start+1)
	for _, e := range it.list[start : end+1] {
		out = append(out, e)
	}
	return out
}

// cmdLRem is LREM key count element: removes up to count occurrences from
// the head (count > 0), from the tail (count < 0) or all (0); answers how
// many. An emptied list is deleted.
func cmdLRem(db *DB, now int64, args []string, _ string) Reply {
	count, ok := parseInt(args[1])
	if !ok {
		return errNotInteger
	}
	it, err := db.listOf(args[0], now)
	switch {
	case err != nil:
		return err
	case it == nil:
		return int64(0)
	}
	limit := count
	if limit < 0 {
		limit = -limit // math.MinInt64 stays negative: no limit, as in redis-server
	}
	if limit < 0 {
		limit = 0
	}
	var removed int64
	keep := make([]string, len(it.list))
	copy(keep, it.list)
	drop := make([]bool, len(keep))
	for k := range keep {
		i := k
		if count < 0 {
			i = len(keep) - 1 - k
		}
		if keep[i] == args[2] && (limit == 0 || removed < limit) {
			drop[i] = true
			removed++
		}
	}
	it.list = it.list[:0]
	for i, e := range keep {
		if !drop[i] {
			it.list = append(it.list, e)
		}
	}
	if len(it.list) == 0 {
		delete(db.keys, args[0])
	}
	return removed
}
