package models

// holdTable maps holdKeys to values like a map, by a linear scan while it
// holds few entries (a history's clients and keys: a handful), and by a map
// once it holds more. Its keys have no order (see keys).
type holdTable[V any] struct {
	ks []holdKey
	vs []V
	m  map[holdKey]V
}

// holdTableMax is the size from which a holdTable is a map.
const holdTableMax = 16

func (t *holdTable[V]) get(k holdKey) (V, bool) {
	if t.m != nil {
		v, ok := t.m[k]
		return v, ok
	}
	for i := range t.ks {
		if t.ks[i] == k {
			return t.vs[i], true
		}
	}
	var zero V
	return zero, false
}

func (t *holdTable[V]) set(k holdKey, v V) {
	if t.m != nil {
		t.m[k] = v
		return
	}
	for i := range t.ks {
		if t.ks[i] == k {
			t.vs[i] = v
			return
		}
	}
	if len(t.ks) == holdTableMax {
		t.m = make(map[holdKey]V, 2*holdTableMax)
		for i, k := range t.ks {
			t.m[k] = t.vs[i]
		}
		t.ks, t.vs = nil, nil
		t.m[k] = v
		return
	}
	t.ks = append(t.ks, k)
	t.vs = append(t.vs, v)
}

func (t *holdTable[V]) del(k holdKey) {
	if t.m != nil {
		delete(t.m, k)
		return
	}
	for i := range t.ks {
		if t.ks[i] == k {
			last := len(t.ks) - 1
			t.ks[i], t.vs[i] = t.ks[last], t.vs[last]
			var zero V
			t.ks, t.vs[last] = t.ks[:last], zero
			t.vs = t.vs[:last]
			return
		}
	}
}

func (t *holdTable[V]) len() int {
	if t.m != nil {
		return len(t.m)
	}
	return len(t.ks)
}

// keys appends the keys to dst, in no particular order.
func (t *holdTable[V]) keys(dst []holdKey) []holdKey {
	if t.m == nil {
		return append(dst, t.ks...)
	}
	for k := range t.m {
		dst = append(dst, k)
	}
	return dst
}
