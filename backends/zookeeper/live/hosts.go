package live

import (
	"fmt"
	"slices"
	"sync"

	"github.com/go-zookeeper/zk"
)

// hosts is the order in which a live client tries the servers, as the
// simulated client does: its own server first, then, each time a connection
// is lost or a connect fails, the next one (zkI+1 after zkI, wrapping). It
// replaces go-zookeeper's DNSHostProvider, which shuffles the servers: the
// client's server would be the library's random pick, not locklab's seeded
// one, and the order of the others would change from run to run.
type hosts struct {
	mu      sync.Mutex
	servers []string // own server first
	curr    int      // index of the server last handed out (-1: none)
	last    int      // index of the server last connected to (-1: none)
}

var _ zk.HostProvider = (*hosts)(nil)

// newHosts is the order of addrs (the servers' addresses, zk1 first) that
// starts at addrs[first].
func newHosts(addrs []string, first int) *hosts {
	n := len(addrs)
	servers := make([]string, n)
	for i := range n {
		servers[i] = addrs[(first+i)%n]
	}
	return &hosts{servers: servers, curr: -1, last: -1}
}

// Init checks that go-zookeeper was given the same servers (it shuffles
// them first; the order kept is ours).
func (h *hosts) Init(given []string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	a, b := slices.Clone(given), slices.Clone(h.servers)
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		return fmt.Errorf("zookeeper hosts: the client was given %v, its order has %v", given, h.servers)
	}
	h.curr, h.last = -1, -1
	return nil
}

// Len is the number of servers.
func (h *hosts) Len() int { return len(h.servers) }

// Next is the server to connect to; retryStart tells go-zookeeper that every
// server was tried since the last connection (it waits a second then).
func (h *hosts) Next() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.curr = (h.curr + 1) % len(h.servers)
	retryStart := h.curr == h.last
	if h.last == -1 {
		h.last = 0
	}
	return h.servers[h.curr], retryStart
}

// Connected marks the server last handed out as connected to.
func (h *hosts) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = h.curr
}

// after is the server after the one last handed out (the first one if none
// was): where a new session starts.
func (h *hosts) after() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.servers[(h.curr+1)%len(h.servers)]
}
