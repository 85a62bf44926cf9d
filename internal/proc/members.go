package proc

import (
	"fmt"
	"slices"
	"sync"
)

// Members are the servers of one system that live mode runs as real
// processes of a Group (etcd's members, ZooKeeper's servers), each started
// from a Spec of its own, and the faults a schedule performs on them by
// name: Pause and Resume (SIGSTOP, SIGCONT), Crash (SIGKILL) and Restart
// (the same command line again, over what the server kept on disk). How a
// server is configured, and when it is ready, stay the system's own.
// Errors name the system and the server (`etcd: no member "etcd4"`).
type Members struct {
	system, noun string
	group        *Group
	members      []*Member
}

// Member is one server of Members: its command line and its latest
// process.
type Member struct {
	spec Spec

	mu sync.Mutex
	p  *Process
}

// NewMembers makes the servers of system, which errors call noun
// ("member", "server"), run as processes of g. Close closes g.
func NewMembers(system, noun string, g *Group) *Members {
	return &Members{system: system, noun: noun, group: g}
}

// Add declares a server started by spec (spec.Name names it); Start or
// StartAll starts it.
func (ms *Members) Add(spec Spec) *Member {
	m := &Member{spec: spec}
	ms.members = append(ms.members, m)
	return m
}

// Start starts m's process from its Spec (again, after a crash).
func (ms *Members) Start(m *Member) error {
	p, err := ms.group.Start(m.spec)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.p = p
	m.mu.Unlock()
	return nil
}

// StartAll starts every server, in the order they were added.
func (ms *Members) StartAll() error {
	for _, m := range ms.members {
		if err := ms.Start(m); err != nil {
			return err
		}
	}
	return nil
}

// Name is the server's name (its Spec's).
func (m *Member) Name() string { return m.spec.Name }

// Process is the server's latest process (nil before its first start).
func (m *Member) Process() *Process {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.p
}

// Pause stops a server (SIGSTOP).
func (ms *Members) Pause(name string) error { return ms.do(name, (*Process).Pause) }

// Resume continues a paused server (SIGCONT).
func (ms *Members) Resume(name string) error { return ms.do(name, (*Process).Resume) }

// Crash kills a server (SIGKILL); what it keeps on disk stays.
func (ms *Members) Crash(name string) error { return ms.do(name, (*Process).Kill) }

// Restart starts a crashed server again, with the same command line; a
// server that runs is left alone.
func (ms *Members) Restart(name string) error {
	m, err := ms.member(name)
	if err != nil {
		return err
	}
	if p := m.Process(); p != nil && p.Alive() {
		return nil
	}
	return ms.Start(m)
}

// Close stops every process of the group (see Group.Close).
func (ms *Members) Close() { ms.group.Close() }

// do performs f on the process of the server called name.
func (ms *Members) do(name string, f func(*Process) error) error {
	m, err := ms.member(name)
	if err != nil {
		return err
	}
	p := m.Process()
	if p == nil {
		return fmt.Errorf("%s: %s %s has not been started", ms.system, ms.noun, name)
	}
	return f(p)
}

// member is the server called name.
func (ms *Members) member(name string) (*Member, error) {
	i := slices.IndexFunc(ms.members, func(m *Member) bool { return m.Name() == name })
	if i < 0 {
		return nil, fmt.Errorf("%s: no %s %q", ms.system, ms.noun, name)
	}
	return ms.members[i], nil
}
