package engine

// cmdHExists is HEXISTS key field: 1 if the hash has the field, else 0.
func cmdHExists(db *DB, now int64, args []string, _ string) Reply {
	it, err := db.hashOf(args[0], now, false)
	switch {
	case err != nil:
		return err
	case it == nil:
		return int64(0)
	}
	if _, ok := it.hash[args[1]]; ok {
		return int64(1)
	}
	return int64(0)
}

// cmdHLen is HLEN key: the number of fields (0 for a missing key).
func cmdHLen(db *DB, now int64, args []string, _ string) Reply {
	it, err := db.hashOf(args[0], now, false)
	switch {
	case err != nil:
		return err
	case it == nil:
		return int64(0)
	}
	return int64(len(it.hash))
}

// cmdHKeys is HKEYS key: the field names in the order they were added,
// which is redis-server's order for a hash it keeps as a listpack (up to
// 128 fields of up to 64 bytes); for a larger hash redis-server answers in
// its hash table's order, which the engine does not reproduce.
func cmdHKeys(db *DB, now int64, args []string, _ string) Reply {
	it, err := db.hashOf(args[0], now, false)
	switch {
	case err != nil:
		return err
	case it == nil:
		return []Reply{}
	}
	out := make([]Reply, len(it.order))
	for i, f := range it.order {
		out[i] = f
	}
	return out
}
