package libmode

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stuckLock blocks outside the bubble: its Acquire waits for a mutex
// nobody will unlock (a goroutine blocked on a mutex is not durably
// blocked, so virtual time cannot advance past it).
type stuckLock struct{ mu *sync.Mutex }

func (l stuckLock) Acquire(ctx context.Context, key string) (Lease, error) {
	l.mu.Lock() // held for ever by the test
	return Lease{Owner: "never"}, nil
}

func (l stuckLock) Release(ctx context.Context, lease Lease) error { return nil }

// socketLock talks to a real server over a real socket (a listener that
// never answers): the read waits on the machine's network poller, which
// the bubble cannot see.
type socketLock struct{ addr string }

func (l socketLock) Acquire(ctx context.Context, key string) (Lease, error) {
	c, err := net.Dial("tcp", l.addr)
	if err != nil {
		return Lease{}, err
	}
	_, err = c.Read(make([]byte, 1))
	return Lease{}, err
}

func (l socketLock) Release(ctx context.Context, lease Lease) error { return nil }

// TestHelperBlockedOutsideTheBubble is run by TestBlockedOutsideTheBubble
// in a process of its own: the watchdog ends the process.
func TestHelperBlockedOutsideTheBubble(t *testing.T) {
	var lock Lock
	switch os.Getenv("LIBMODE_BLOCKED_HELPER") {
	case "mutex":
		var mu sync.Mutex
		mu.Lock()
		lock = stuckLock{mu: &mu}
	case "socket":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		lock = socketLock{addr: l.Addr().String()}
	default:
		t.Skip("run by TestBlockedOutsideTheBubble")
	}
	Run(t, Config{Clients: 1, StuckAfter: time.Second,
		NewLock: func(c *Client) (Lock, error) { return lock, nil }})
}

// TestBlockedOutsideTheBubble: a library that blocks outside the bubble is
// reported with its goroutine and the call, within StuckAfter (1 s here)
// plus a tick, never a silent hang.
func TestBlockedOutsideTheBubble(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the test binary again")
	}
	for _, tc := range []struct{ kind, call, code string }{
		{"mutex", "[sync.Mutex.Lock, synctest bubble", "libmode.stuckLock.Acquire"},
		{"socket", "[IO wait, synctest bubble", "libmode.socketLock.Acquire"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBlockedOutsideTheBubble$", "-test.count=1")
			cmd.Env = append(os.Environ(), "LIBMODE_BLOCKED_HELPER="+tc.kind)
			began := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(began)
			require.Error(t, err, "the blocked run ends the process")
			text := string(out)
			t.Logf("after %v the user sees:\n%s", took.Round(10*time.Millisecond), firstLines(text, 16))
			assert.Contains(t, text, "made no progress for 1s of real time")
			assert.Contains(t, text, tc.call, "the call that blocks")
			assert.Contains(t, text, tc.code, "the goroutine's code")
			assert.Less(t, took, 30*time.Second)
		})
	}
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
