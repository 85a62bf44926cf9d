package chubby

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestState: the replicated state's rules, as the lock relies on them.
func TestState(t *testing.T) {
	s := newState()
	tests := []struct {
		name string
		txn  txn
		code Code
		gen  uint64
		lost []string
		// freed: the locks freed by an expiry and not granted since after
		// the txn (what a new master restarts the lock-delay of)
		freed []string
	}{
		{"a session opens", txn{Op: "open", Session: 1}, CodeOK, 0, nil, nil},
		{"another session opens", txn{Op: "open", Session: 2}, CodeOK, 0, nil, nil},
		{"a free lock is granted with generation 1", txn{Op: "acquire", Session: 1, Lock: "k"}, CodeOK, 1, nil, nil},
		{"a retried acquire by the holder keeps its generation", txn{Op: "acquire", Session: 1, Lock: "k"}, CodeOK, 1, nil, nil},
		{"a held lock is busy for others", txn{Op: "acquire", Session: 2, Lock: "k"}, CodeBusy, 0, nil, nil},
		{"a release by a non-holder frees nothing", txn{Op: "release", Session: 2, Lock: "k"}, CodeBusy, 0, nil, nil},
		{"the holder's expiry frees its locks (lock-delay follows)", txn{Op: "expire", Session: 1}, CodeOK, 0, []string{"k"}, []string{"k"}},
		{"an expired session cannot acquire", txn{Op: "acquire", Session: 1, Lock: "k"}, CodeExpired, 0, nil, []string{"k"}},
		{"a lock freed by an expiry is refused to an acquire its master let through before the expiry",
			txn{Op: "acquire", Session: 2, Lock: "k"}, CodeBusy, 0, nil, []string{"k"}},
		{"the next grant, once its master saw the lock-delay over, has the next generation",
			txn{Op: "acquire", Session: 2, Lock: "k", Cleared: true}, CodeOK, 2, nil, nil},
		{"a clean release", txn{Op: "release", Session: 2, Lock: "k"}, CodeOK, 0, nil, nil},
	}
	for _, tc := range tests {
		o := s.apply(tc.txn)
		assert.Equal(t, tc.code, o.code, tc.name)
		assert.Equal(t, tc.gen, o.seq.Generation, tc.name)
		assert.Equal(t, tc.lost, o.lost, tc.name)
		assert.Equal(t, tc.freed, s.lostLocks(), tc.name)
	}
	assert.Equal(t, []int64{2}, s.sessionIDs())
}
