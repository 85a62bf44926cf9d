package raftnode

import "github.com/locklab/locklab/sim"

// AddNodes adds a node to w for each server of a raft group, in raft-id
// order (servers[i] has raft id i+1 and is named name(i+1)), and returns
// them in that order: the order the services' Nodes, LeaderNode and Resolve
// keep.
func AddNodes[S sim.Handler, ID int | uint64](w *sim.World, servers []S, name func(id ID) string) []*sim.Node {
	nodes := make([]*sim.Node, 0, len(servers))
	for i, s := range servers {
		nodes = append(nodes, w.AddNode(name(ID(i+1)), sim.NodeOptions{Handler: s}))
	}
	return nodes
}

// LeaderNode is the node of the server that is up and leads the highest
// term (nodes[i] runs servers[i]), nil when none does.
func LeaderNode[S any](servers []S, nodes []*sim.Node, replica func(S) *Replica) *sim.Node {
	if i, ok := Leader(servers, replica); ok {
		return nodes[i]
	}
	return nil
}

// Resolve maps the two role names a fault schedule may give a raft group,
// looked up when the fault starts: leaderRole is the leader (nothing when
// there is none) and othersRole every other node of nodes (all of them when
// there is no leader). ok is false for any other name; leader is asked only
// for a role name.
func Resolve(name, leaderRole, othersRole string, nodes []*sim.Node, leader func() *sim.Node) (_ []*sim.Node, ok bool) {
	switch name {
	case leaderRole:
		if l := leader(); l != nil {
			return []*sim.Node{l}, true
		}
		return nil, true
	case othersRole:
		l := leader()
		var out []*sim.Node
		for _, n := range nodes {
			if n != l {
				out = append(out, n)
			}
		}
		return out, true
	}
	return nil, false
}
