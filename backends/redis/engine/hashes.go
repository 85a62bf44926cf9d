package engine

// readHash answers a command on an existing hash: fn's reply, missing when
// the key holds nothing, WRONGTYPE when it holds another type.
func readHash(db *DB, key string, now int64, missing Reply, fn func(it *item) Reply) Reply {
	it, err := db.hashOf(key, now, false)
	switch {
	case err != nil:
		return err
	case it == nil:
		return missing
	}
	return fn(it)
}

// cmdHExists is HEXISTS key field: 1 if the hash has the field, else 0.
func cmdHExists(db *DB, now int64, args []string, _ string) Reply {
	return readHash(db, args[0], now, int64(0), func(it *item) Reply {
		if _, ok := it.hash[args[1]]; ok {
			return int64(1)
		}
		return int64(0)
	})
}

// cmdHLen is HLEN key: the number of fields (0 for a missing key).
func cmdHLen(db *DB, now int64, args []string, _ string) Reply {
	return readHash(db, args[0], now, int64(0), func(it *item) Reply { return int64(len(it.hash)) })
}

// cmdHKeys is HKEYS key: the field names in the order they were added,
// which is redis-server's order for a hash it keeps as a listpack (up to
// 128 fields of up to 64 bytes); for a larger hash redis-server answers in
// its hash table's order, which the engine does not reproduce.
func cmdHKeys(db *DB, now int64, args []string, _ string) Reply {
	return readHash(db, args[0], now, []Reply{}, func(it *item) Reply {
		out := make([]Reply, len(it.order))
		for i, f := range it.order {
			out[i] = f
		}
		return out
	})
}
