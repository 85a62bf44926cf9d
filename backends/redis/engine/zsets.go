package engine

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// zset is a sorted set: members ordered by score, then bytewise by name,
// as redis-server orders them.
type zset struct {
	score  map[string]float64
	sorted []string
}

func (z *zset) clone() *zset {
	s := &zset{score: make(map[string]float64, len(z.score)), sorted: slices.Clone(z.sorted)}
	for _, m := range z.sorted {
		s.score[m] = z.score[m]
	}
	return s
}

func (z *zset) less(a, b string) int {
	if c := cmp.Compare(z.score[a], z.score[b]); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// set gives member score, placing it in order. A score of -0 is kept as
// 0, as redis-server's listpack keeps it (an integer).
func (z *zset) set(member string, score float64) {
	if score == 0 {
		score = 0
	}
	if _, ok := z.score[member]; ok {
		z.remove(member)
	}
	z.score[member] = score
	i, _ := slices.BinarySearchFunc(z.sorted, member, z.less)
	z.sorted = slices.Insert(z.sorted, i, member)
}

func (z *zset) remove(member string) {
	i, found := slices.BinarySearchFunc(z.sorted, member, z.less)
	if !found {
		panic("engine: a sorted set lost the order of " + member)
	}
	z.sorted = slices.Delete(z.sorted, i, i+1)
	delete(z.score, member)
}

// zsetOf is key's sorted set (nil when missing), or WRONGTYPE.
func (db *DB) zsetOf(key string, now int64) (*item, *Error) {
	it := db.lookup(key, now)
	if it != nil && it.kind != kindZSet {
		return nil, errWrongType
	}
	return it, nil
}

var errNotFloat = errorf("ERR value is not a valid float")

// parseScore reads a score as redis-server's strtod-based reading does:
// no leading space, nothing after the number, "inf" and "-inf" allowed,
// NaN and out-of-range values refused.
func parseScore(s string) (float64, bool) {
	if s == "" || s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' || s[0] == '\v' || s[0] == '\f' || strings.Contains(s, "_") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// formatScore is a score in a reply: "%.17g", and "inf", "-inf", as
// redis-server 7.0 writes a double for RESP2.
func formatScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// cmdZAdd is ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member ...
func cmdZAdd(db *DB, now int64, args []string, _ string) Reply {
	return db.zaddCommand(now, args, false)
}

// zaddCommand parses ZADD's arguments (key first), as redis-server does
// for ZADD and ZINCRBY (incr set): options, then score-member pairs.
func (db *DB) zaddCommand(now int64, args []string, incr bool) Reply {
	var nx, xx, gt, lt, ch bool
	i := 1
options:
	for ; i < len(args); i++ {
		switch strings.ToLower(args[i]) {
		case "nx":
			nx = true
		case "xx":
			xx = true
		case "gt":
			gt = true
		case "lt":
			lt = true
		case "ch":
			ch = true
		case "incr":
			incr = true
		default:
			break options
		}
	}
	pairs := args[i:]
	switch {
	case len(pairs) == 0 || len(pairs)%2 != 0:
		return errSyntax
	case nx && xx:
		return errorf("ERR XX and NX options at the same time are not compatible")
	case (gt && nx) || (lt && nx) || (gt && lt):
		return errorf("ERR GT, LT, and/or NX options at the same time are not compatible")
	case incr && len(pairs) > 2:
		return errorf("ERR INCR option supports a single increment-element pair")
	}
	scores := make([]float64, len(pairs)/2)
	for j := range scores {
		f, ok := parseScore(pairs[2*j])
		if !ok {
			return errNotFloat
		}
		scores[j] = f
	}
	return db.zadd(now, args[0], pairs, scores, zaddFlags{nx: nx, xx: xx, gt: gt, lt: lt, ch: ch, incr: incr})
}

type zaddFlags struct{ nx, xx, gt, lt, ch, incr bool }

// zadd applies parsed score-member pairs as redis-server's zsetAdd does.
func (db *DB) zadd(now int64, key string, pairs []string, scores []float64, f zaddFlags) Reply {
	it, err := db.zsetOf(key, now)
	if err != nil {
		return err
	}
	var added, updated, processed int64
	var score float64
	if it == nil && !f.xx {
		it = &item{kind: kindZSet, zset: &zset{score: map[string]float64{}}}
		db.keys[key] = it
	}
	if it != nil {
		for j, s := range scores {
			member := pairs[2*j+1]
			cur, exists := it.zset.score[member]
			switch {
			case exists && f.nx:
				continue
			case exists:
				if f.incr {
					s += cur
					if math.IsNaN(s) {
						return errorf("ERR resulting score is not a number (NaN)")
					}
				}
				if (f.lt && s >= cur) || (f.gt && s <= cur) {
					continue
				}
				if s != cur {
					it.zset.set(member, s)
					updated++
				}
			case f.xx:
				continue
			default:
				it.zset.set(member, s)
				added++
			}
			processed++
			score = s
		}
	}
	if f.incr {
		if processed == 0 {
			return nil
		}
		return formatScore(score)
	}
	if f.ch {
		return added + updated
	}
	return added
}

// cmdZIncrBy is ZINCRBY key increment member: ZADD INCR (redis-server
// runs it as ZADD's code, which would read an increment spelled "nx" as an
// option; so does this).
func cmdZIncrBy(db *DB, now int64, args []string, _ string) Reply {
	return db.zaddCommand(now, args, true)
}

// cmdZScore is ZSCORE key member: the score, nil when missing.
func cmdZScore(db *DB, now int64, args []string, _ string) Reply {
	it, err := db.zsetOf(args[0], now)
	switch {
	case err != nil:
		return err
	case it == nil:
		return nil
	}
	s, ok := it.zset.score[args[1]]
	if !ok {
		return nil
	}
	return formatScore(s)
}

// cmdZRem is ZREM key member...: how many were removed. An emptied set is
// deleted.
func cmdZRem(db *DB, now int64, args []string, _ string) Reply {
	it, err := db.zsetOf(args[0], now)
	switch {
	case err != nil:
		return err
	case it == nil:
		return int64(0)
	}
	var n int64
	for _, m := range args[1:] {
		if _, ok := it.zset.score[m]; ok {
			it.zset.remove(m)
			n++
		}
	}
	if len(it.zset.sorted) == 0 {
		delete(db.keys, args[0])
	}
	return n
}

// cmdZRange is ZRANGE key start stop [REV] [WITHSCORES], by rank. The
// BYSCORE and BYLEX forms (and their LIMIT) are not simulated: they answer
// an error saying so.
func cmdZRange(db *DB, now int64, args []string, _ string) Reply {
	var rev, withScores, limit bool
	var by string
	for j := 3; j < len(args); j++ {
		switch o := strings.ToLower(args[j]); {
		case o == "withscores":
			withScores = true
		case o == "limit" && len(args)-j-1 >= 2:
			off, ok1 := parseInt(args[j+1])
			cnt, ok2 := parseInt(args[j+2])
			if !ok1 || !ok2 {
				return errNotInteger
			}
			_ = off
			limit = limit || cnt != -1
			j += 2
		case o == "rev" && !rev:
			rev = true
		case (o == "bylex" || o == "byscore") && by == "":
			by = o
		default:
			return errSyntax
		}
	}
	switch {
	case limit && by == "":
		return errorf("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
	case withScores && by == "bylex":
		return errorf("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
	case by != "":
		return errorf("ERR ZRANGE " + strings.ToUpper(by) + " is not simulated by this engine (ZRANGE by rank is)")
	}
	start, ok1 := parseInt(args[1])
	end, ok2 := parseInt(args[2])
	if !ok1 || !ok2 {
		return errNotInteger
	}
	it, err := db.zsetOf(args[0], now)
	switch {
	case err != nil:
		return err
	case it == nil:
		return []Reply{}
	}
	n := int64(len(it.zset.sorted))
	start, end, ok := rankRange(start, end, n)
	if !ok {
		return []Reply{}
	}
	out := []Reply{}
	for r := start; r <= end; r++ {
		m := it.zset.sorted[r]
		if rev {
			m = it.zset.sorted[n-1-r]
		}
		out = append(out, m)
		if withScores {
			out = append(out, formatScore(it.zset.score[m]))
		}
	}
	return out
}
