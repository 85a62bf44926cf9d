package liveform

import (
	"fmt"
	"slices"

	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// Unsupported is why a fault kind cannot run live on any system ("" when
// it can).
var Unsupported = map[nemesis.Kind]string{
	nemesis.ClockDrift: "clock-drift cannot run live: a drift would have to slow or speed every timer of the real " +
		"library (hashicorp/raft's included); use clock-jump, which moves a node's wall clock",
}

// LeftOut is a fault kind a random schedule does not draw live, and why.
type LeftOut struct {
	Kind nemesis.Kind
	Why  string
}

// RandomKinds are the fault kinds `--nemesis random` draws for t's system
// when the run is live, or comparable with a live run: each kind of which
// the live form can perform every fault the random generator may draw
// (nemesis.Random's shapes, on the servers, the roles, the clients and the
// storage). The other kinds are left out, each with the reason. Both
// worlds draw from these kinds, so that one seed gives one schedule.
func RandomKinds(t scenario.Test) ([]nemesis.Kind, []LeftOut, error) {
	form, ok := Find(t.System)
	if !ok {
		return nil, nil, Unknown(t.System)
	}
	desc, err := form.Describe(t)
	if err != nil {
		return nil, nil, err
	}
	var kinds []nemesis.Kind
	var left []LeftOut
	for _, k := range nemesis.Kinds {
		if why := desc.CannotDraw(k, t.ClientNames()); why != "" {
			left = append(left, LeftOut{Kind: k, Why: why})
			continue
		}
		kinds = append(kinds, k)
	}
	if len(kinds) == 0 {
		return nil, left, fmt.Errorf("system %s can perform no fault kind live", t.System)
	}
	return kinds, left, nil
}

// CannotDraw says why the system cannot perform some fault of kind k the
// random generator may draw, given the clients ("" when it can perform
// every one).
func (d Description) CannotDraw(k nemesis.Kind, clients []string) string {
	if why := Unsupported[k]; why != "" {
		return why
	}
	if d.Refuse == nil {
		return ""
	}
	for _, f := range drawable(k, d.Servers, d.Roles, clients) {
		if why := d.Refuse(f); why != "" {
			return why
		}
	}
	return ""
}

// drawable are the shapes of the faults of kind k nemesis.Random may draw
// (one of each shape on each node or pair it may pick).
func drawable(k nemesis.Kind, servers, roles, clients []string) []nemesis.Fault {
	serverish := append(slices.Clone(servers), roles...)
	nodes := append(slices.Clone(clients), serverish...)
	one := func(ns []string) []nemesis.Fault {
		var out []nemesis.Fault
		for _, n := range ns {
			out = append(out, nemesis.Fault{Kind: k, Targets: []string{n}})
		}
		return out
	}
	var out []nemesis.Fault
	switch k {
	case nemesis.Crash:
		return one(serverish)
	case nemesis.Pause, nemesis.ClockJump, nemesis.ClockDrift:
		return one(nodes)
	case nemesis.Partition:
		out = one(nodes)
		for _, a := range nodes {
			for _, b := range nodes {
				if a != b {
					out = append(out, nemesis.Fault{Kind: k, From: []string{a}, To: []string{b}},
						nemesis.Fault{Kind: k, Groups: [][]string{{a}, {b}}})
				}
			}
		}
	case nemesis.Delay:
		for _, c := range clients {
			out = append(out, nemesis.Fault{Kind: k, From: []string{c}, To: []string{"storage"}})
			for _, s := range serverish {
				out = append(out, nemesis.Fault{Kind: k, From: []string{c}, To: []string{s}})
			}
		}
		for _, a := range serverish {
			for _, b := range serverish {
				if a != b {
					out = append(out, nemesis.Fault{Kind: k, From: []string{a}, To: []string{b}})
				}
			}
		}
	}
	return out
}
