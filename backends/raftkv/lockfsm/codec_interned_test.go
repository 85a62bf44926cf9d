package lockfsm

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeInternedIsDecode: interning changes no decoded value, and a
// string seen before is the same string afterwards (no new allocation).
func TestDecodeInternedIsDecode(t *testing.T) {
	cmds := []Command{
		{Op: OpTryLock, Key: "k", Acquirer: "c1:k", Lease: 5, Context: []byte("c1"), Session: "c1", Seq: 1},
		{Op: OpUnlock, Key: "k", Acquirer: "c1:k", Session: "c1", Seq: 2},
		{Op: OpTryLock, Key: "k2", Acquirer: "c2:k2", Session: "c2", Seq: 1, Stamp: 7},
	}
	strs := Strings{}
	for _, c := range cmds {
		want, err := Decode(Encode(c))
		require.NoError(t, err)
		got, err := DecodeInterned(Encode(c), strs)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	assert.Len(t, strs, 6, "k, c1:k, c1, k2, c2:k2, c2 (the context c1 among them)")
	for _, c := range cmds {
		allocs := testing.AllocsPerRun(100, func() {
			_, _ = DecodeInterned(Encode(c), strs)
		})
		assert.LessOrEqual(t, allocs, 1.0, "only Encode's buffer (the context is a slice of it)")
	}
}

// TestDecodeCopiesTheContextDecodeInternedSharesIt: Decode's command owns its
// context; DecodeInterned's is a capped slice of the data it read.
func TestDecodeCopiesTheContextDecodeInternedSharesIt(t *testing.T) {
	data := Encode(Command{Op: OpTryLock, Key: "k", Acquirer: "c1:k", Lease: 5, Context: []byte("ctx")})
	own, err := Decode(data)
	require.NoError(t, err)
	shared, err := DecodeInterned(data, Strings{})
	require.NoError(t, err)
	require.Equal(t, "ctx", string(shared.Context))
	assert.Equal(t, len(shared.Context), cap(shared.Context), "capped: an append cannot write into the data")
	i := bytes.Index(data, []byte("ctx"))
	data[i] = 'C'
	assert.Equal(t, "ctx", string(own.Context))
	assert.Equal(t, "Ctx", string(shared.Context))
}
