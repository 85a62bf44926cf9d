package live

import (
	"slices"
	"strings"

	"github.com/locklab/locklab/backends/zookeeper"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/nemesis"
)

// Describe is an ensemble of o.Servers servers as a live run knows it
// before it starts: servers zk1..zkN, the roles a schedule may name
// (leader, followers, server-of:CLIENT, servers-but:CLIENT) and the faults
// a real ensemble cannot perform, refused with the reason. Every live form
// over a ZooKeeper ensemble (the built-in recipe's, a user's lock's)
// describes it so.
func Describe(o zookeeper.Options) liveform.Description {
	desc := liveform.RaftCluster(liveform.ServerNames(o.Servers, zookeeper.ServerName))
	servers, raftRoles := desc.Servers, desc.Resolve
	desc.Roles = zookeeper.Roles()
	desc.Resolve = func(role string) ([]string, bool) {
		if liveform.ServerRole(role) {
			return servers, true
		}
		return raftRoles(role)
	}
	refuse := liveform.RefuseRaftCluster("ZooKeeper", servers, zkNoClock, "")
	isPeerCut := liveform.RefuseRaftCluster("ZooKeeper", servers, "", "x")
	desc.Refuse = func(f nemesis.Fault) string {
		if why := refuse(f); why != "" {
			return why
		}
		if f.Kind == nemesis.Partition && len(f.Groups) == 0 && len(f.From) > 0 && isPeerCut(f) != "" {
			return zkNoOneWay
		}
		return ""
	}
	return desc
}

// Perform is what a started ensemble gives a live deployment whatever lock
// runs on it: desc (see Describe) with its roles resolved on the running
// servers -- the leader srvr names, server-of:CLIENT the server the client
// is connected to (serverOf gives its address, "" when it has none) -- and
// the faults its servers perform: pause and resume (SIGSTOP, SIGCONT),
// crash and restart, cuts between servers through their proxies. The
// caller adds the locks, events, figures and Close.
func (e *Ensemble) Perform(desc liveform.Description, serverOf func(client string) string) *liveform.Deployed {
	server := func(client string) string {
		name, _ := e.ServerAt(serverOf(client))
		return name
	}
	desc.Resolve = func(role string) ([]string, bool) {
		switch {
		case role == "leader":
			if l := e.Leader(); l != "" {
				return []string{l}, true
			}
			return nil, true
		case role == "followers":
			l := e.Leader()
			return slices.DeleteFunc(e.Names(), func(n string) bool { return n == l }), true
		case strings.HasPrefix(role, "server-of:"):
			if s := server(strings.TrimPrefix(role, "server-of:")); s != "" {
				return []string{s}, true
			}
			return nil, true
		case strings.HasPrefix(role, "servers-but:"):
			s := server(strings.TrimPrefix(role, "servers-but:"))
			return slices.DeleteFunc(e.Names(), func(n string) bool { return n == s }), true
		}
		return nil, false
	}
	return &liveform.Deployed{
		Description: desc,
		Pause:       e.Pause,
		Resume:      e.Resume,
		Crash:       e.Crash,
		Restart:     e.Restart,
		Cut: func(from, to string) (bool, error) {
			if slices.Contains(desc.Servers, from) && slices.Contains(desc.Servers, to) {
				return e.Cut(from, to), nil
			}
			return false, nil
		},
		Heal: func(from, to string) error {
			e.Heal(from, to)
			return nil
		},
	}
}
