package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestKeyspaceCommands(t *testing.T) {
	const s = time.Second
	type step struct {
		wall    time.Duration
		cmd     any
		want    Reply
		changed bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"SET NX refuses a live key and takes an expired one", []step{
			{0, SetNX{Key: "k", Value: "a", TTL: 10 * s}, Reply{OK: true}, true},
			{5 * s, SetNX{Key: "k", Value: "b", TTL: 10 * s}, Reply{}, false},
			{10 * s, SetNX{Key: "k", Value: "b", TTL: 10 * s}, Reply{OK: true}, true},
			{11 * s, Get{Key: "k"}, Reply{OK: true, Value: "b"}, false},
		}},
		{"expiry follows the wall clock it is given, jumps included", []step{
			{100 * s, SetNX{Key: "k", Value: "a", TTL: 10 * s}, Reply{OK: true}, true},
			{200 * s, Get{Key: "k"}, Reply{}, false}, // the clock jumped forward: gone
		}},
		{"compare-and-delete only deletes our value", []step{
			{0, SetNX{Key: "k", Value: "a", TTL: 10 * s}, Reply{OK: true}, true},
			{1 * s, DelIfValue{Key: "k", Value: "b"}, Reply{Value: "a"}, false},
			{1 * s, DelIfValue{Key: "k", Value: "a"}, Reply{OK: true, Int: 1}, true},
			{1 * s, Get{Key: "k"}, Reply{}, false},
		}},
		{"plain DEL deletes whoever holds it", []step{
			{0, SetNX{Key: "k", Value: "b", TTL: 10 * s}, Reply{OK: true}, true},
			{1 * s, Del{Key: "k"}, Reply{OK: true, Int: 1}, true},
			{1 * s, Del{Key: "k"}, Reply{}, false},
		}},
		{"renewal extends only our lease", []step{
			{0, SetNX{Key: "k", Value: "a", TTL: 10 * s}, Reply{OK: true}, true},
			{8 * s, ExpireIfValue{Key: "k", Value: "a", TTL: 10 * s}, Reply{OK: true, Int: 1}, true},
			{15 * s, Get{Key: "k"}, Reply{OK: true, Value: "a"}, false},
			{15 * s, ExpireIfValue{Key: "k", Value: "z", TTL: 10 * s}, Reply{}, false},
			{18 * s, Get{Key: "k"}, Reply{}, false},
		}},
		{"fencing tokens increase with each grant", []step{
			{0, SetNXFence{Key: "k", Value: "a", FenceKey: "k:fence", TTL: s}, Reply{OK: true, Int: 1}, true},
			{0, SetNXFence{Key: "k", Value: "b", FenceKey: "k:fence", TTL: s}, Reply{}, false},
			{2 * s, SetNXFence{Key: "k", Value: "b", FenceKey: "k:fence", TTL: s}, Reply{OK: true, Int: 2}, true},
			{2 * s, Incr{Key: "k:fence"}, Reply{OK: true, Int: 3}, true},
		}},
		{"reentrant hash lock counts holds per owner", []step{
			{0, HoldLock{Key: "k", Owner: "o1", FenceKey: "f", TTL: 10 * s}, Reply{OK: true, Int: 1}, true},
			{1 * s, HoldLock{Key: "k", Owner: "o1", FenceKey: "f", TTL: 10 * s}, Reply{OK: true}, true},
			{1 * s, HoldLock{Key: "k", Owner: "o2", FenceKey: "f", TTL: 10 * s}, Reply{}, false},
			{2 * s, UnholdLock{Key: "k", Owner: "o2", TTL: 10 * s}, Reply{}, false},
			{2 * s, UnholdLock{Key: "k", Owner: "o1", TTL: 10 * s}, Reply{OK: true, Int: 1}, true},
			{2 * s, UnholdLock{Key: "k", Owner: "o1", TTL: 10 * s}, Reply{OK: true}, true},
			{2 * s, HoldLock{Key: "k", Owner: "o2", FenceKey: "f", TTL: 10 * s}, Reply{OK: true, Int: 2}, true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ks := NewKeyspace()
			for i, st := range tc.steps {
				got, changed := ks.Apply(st.cmd, st.wall)
				assert.Equal(t, st.want, got, "step %d %T", i, st.cmd)
				assert.Equal(t, st.changed, changed, "step %d %T changed", i, st.cmd)
			}
		})
	}
}
