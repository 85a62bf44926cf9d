package harness

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

// TestEveryDesignPrepares: every registered design runs in each of its
// modes, and an unfenced mode never names fencing as its guard.
func TestEveryDesignPrepares(t *testing.T) {
	designs := system.Designs()
	require.NotEmpty(t, designs)
	for _, d := range designs {
		require.NotEmpty(t, d.Modes, d.Name)
		for _, m := range d.Modes {
			tt := scenario.Test{System: d.System, SystemOptions: d.SystemOptions, Storage: m.Storage, FenceReads: m.FenceReads}
			p, err := Prepare(tt)
			require.NoError(t, err, "%s in %s", d.Name, m.Storage)
			p.World.Close()
			if m.Storage == "unfenced" {
				assert.NotContains(t, m.Guard, "fencing", d.Name)
			}
		}
	}
}

// TestDesignsAreDistinct: no two designs share a name, and no two design
// modes are the same row (system, options with defaults filled in, storage
// mode), so that every row of the matrix is one design's.
func TestDesignsAreDistinct(t *testing.T) {
	names := map[string]bool{}
	rows := map[string]string{}
	for _, d := range system.Designs() {
		assert.False(t, names[d.Name], "two designs are called %q", d.Name)
		names[d.Name] = true
		sys, err := system.Find(d.System)
		require.NoError(t, err)
		eff, err := sys.Options.Effective(d.SystemOptions)
		require.NoError(t, err, d.Name)
		for _, m := range d.Modes {
			key := fmt.Sprint(d.System, eff, m.StorageName())
			if other, dup := rows[key]; dup {
				t.Errorf("%s and %s are the same row in %s", other, d.Name, m.StorageName())
			}
			rows[key] = d.Name
		}
		for k, v := range d.SystemOptions {
			assert.NotEqual(t, defaultOf(sys, k), v, "%s: option %s is at its default: leave it out", d.Name, k)
		}
	}
}

// defaultOf is the declared default of a system's option.
func defaultOf(sys system.System, name string) string {
	for _, d := range sys.Options.Docs() {
		if d.Name == name {
			return d.Default
		}
	}
	return ""
}

// TestEverySystemButTheControlHasADesign: a reader finds every lock system
// among the designs; the control grants everything and is none.
func TestEverySystemButTheControlHasADesign(t *testing.T) {
	has := map[string]int{}
	for _, d := range system.Designs() {
		has[d.System]++
	}
	for _, name := range system.Names() {
		if name == "control" {
			assert.Zero(t, has[name], "the control lock is not a design")
			continue
		}
		assert.Positive(t, has[name], "system %s registers no design", name)
	}
	assert.GreaterOrEqual(t, len(system.Designs()), 15)
	assert.LessOrEqual(t, len(system.Designs()), 25)
}

// TestEveryDesignModeHasItsStoragesGuard: a design's guard is GuardOf's for
// its row; a fenced mode's names fencing, check mode's the sequencer check,
// and an unfenced mode's never says fencing.
func TestEveryDesignModeHasItsStoragesGuard(t *testing.T) {
	for _, d := range system.Designs() {
		for _, m := range d.Modes {
			assert.Equal(t, m.Guard, system.GuardOf(d.System, d.SystemOptions, m.Storage, m.FenceReads), "%s in %s", d.Name, m.StorageName())
			switch {
			case m.Storage == storage.Unfenced:
				assert.NotContains(t, m.Guard, "fencing", "%s: unfenced", d.Name)
			case m.Storage == storage.Check:
				assert.Equal(t, system.GuardSequencer, m.Guard, d.Name)
			case m.Storage == storage.Fenced && !m.FenceReads:
				assert.Equal(t, system.GuardFencing, m.Guard, d.Name)
			case m.Storage == storage.Fenced:
				assert.Equal(t, system.GuardFencingReads, m.Guard, d.Name)
			}
		}
	}
}

// TestGuardOfNamesWhatKeepsTheData: any row's guard, a registered design's
// or not (the full matrix's option variants): by the options when they keep
// the data inside the system, else by the storage mode.
func TestGuardOfNamesWhatKeepsTheData(t *testing.T) {
	o := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name       string
		system     string
		options    map[string]string
		mode       storage.Mode
		fenceReads bool
		want       string
	}{
		{"redis unfenced: only the lock", "redis", nil, storage.Unfenced, false, ""},
		{"a storage mode left empty is unfenced", "zookeeper", nil, "", false, ""},
		{"redis with INCR tokens, fenced", "redis", o("fencing", "true"), storage.Fenced, false, system.GuardFencing},
		{"redis with INCR tokens, fenced reads too", "redis", o("fencing", "true"), storage.Fenced, true, system.GuardFencingReads},
		{"an option variant that is no design, fenced", "redis", o("fencing", "true", "ttl", "5s"), storage.Fenced, false, system.GuardFencing},
		{"a default spelled out is the same design", "redis", o("fencing", "false", "release", "lua"), storage.Unfenced, false, ""},
		{"fence reads without fencing is unfenced", "raftkv", nil, storage.Unfenced, true, ""},
		{"raftkv fenced", "raftkv", o("initial-leader", "n1"), storage.Fenced, false, system.GuardFencing},
		{"zookeeper fenced by czxid", "zookeeper", nil, storage.Fenced, false, system.GuardFencing},
		{"redlock's random values, fenced", "redlock", nil, storage.Fenced, false, system.GuardFencing},
		{"chubby's CheckSequencer", "chubby", nil, storage.Check, false, system.GuardSequencer},
		{"chubby's CheckSequencer without lock-delay", "chubby", o("lock-delay", "0s"), storage.Check, false, system.GuardSequencer},
		{"database optimistic: the compare-and-set", "database", o("mode", "optimistic"), storage.Unfenced, false, system.GuardVersion},
		{"database optimistic over the rows read", "database", o("mode", "optimistic", "versions", "pair"), storage.Unfenced, false, system.GuardVersions},
		{"database for-update, data in the transaction", "database", o("mode", "for-update", "resource", "db"), storage.Unfenced, false, system.GuardTransaction},
		{"database data in the transaction: the storage node's fencing is not used", "database", o("resource", "db"), storage.Fenced, true, system.GuardTransaction},
		{"database unique row, data in autocommitted rows", "database", o("mode", "unique-row", "resource", "db"), storage.Unfenced, false, ""},
		{"database unique row, unlock before commit", "database", o("mode", "unique-row", "resource", "db", "unlock-before-commit", "true"), storage.Unfenced, false, ""},
		{"database unique row, fenced storage", "database", o("mode", "unique-row"), storage.Fenced, false, system.GuardFencing},
		{"database for-update, data elsewhere", "database", nil, storage.Unfenced, false, ""},
		{"etcd guarded Txn", "etcd", o("resource", "etcd"), storage.Unfenced, false, system.GuardEtcdTxn},
		{"etcd guarded Txn of 3.4.3's mutex, fenced storage unused", "etcd", o("resource", "etcd", "check-after-wait", "false"), storage.Fenced, false, system.GuardEtcdTxn},
		{"etcd revision fencing", "etcd", nil, storage.Fenced, false, system.GuardFencing},
		{"etcd unfenced", "etcd", o("lock", "txn"), storage.Unfenced, false, ""},
		{"options that do not parse: by the storage mode", "database", o("mode", "bogus"), storage.Unfenced, false, ""},
		{"an unknown system: by the storage mode", "mongo", nil, storage.Fenced, false, system.GuardFencing},
		{"the control", "control", nil, storage.Unfenced, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, system.GuardOf(tc.system, tc.options, tc.mode, tc.fenceReads))
		})
	}
}

// TestNoUnfencedRowSaysFencing: the guard of every catalog variant's
// configuration in unfenced storage never says "fencing".
func TestNoUnfencedRowSaysFencing(t *testing.T) {
	for _, sc := range scenario.Catalog() {
		for _, v := range sc.Variants {
			g := system.GuardOf(v.Test.System, v.Test.SystemOptions, storage.Unfenced, false)
			assert.NotContains(t, g, "fencing", "%s/%s", sc.Name, v.Name)
		}
	}
}

// TestDesignFlagsAreExact: the flags name the system, every option in name
// order and the storage mode.
func TestDesignFlagsAreExact(t *testing.T) {
	d := system.Design{System: "redis", SystemOptions: map[string]string{"wait": "1", "replicas": "2"}}
	assert.Equal(t, "--system redis -o replicas=2 -o wait=1 --storage unfenced", d.Flags(system.DesignMode{Storage: storage.Unfenced}))
	assert.Equal(t, "--system redis -o replicas=2 -o wait=1 --storage fenced --fence-reads", d.Flags(system.DesignMode{Storage: storage.Fenced, FenceReads: true}))
	assert.Equal(t, "--system chubby --storage check", system.Design{System: "chubby"}.Flags(system.DesignMode{Storage: storage.Check}))
	assert.Equal(t, "fenced+reads", system.DesignMode{Storage: storage.Fenced, FenceReads: true}.StorageName())
}

// TestEveryDesignKeepsTheDataWithoutFaults: run 20 s without faults, every
// design in every mode keeps its critical sections atomic and grants most
// acquires; every lock but the optimistic (which has none) is a mutex too.
func TestEveryDesignKeepsTheDataWithoutFaults(t *testing.T) {
	for _, d := range system.Designs() {
		for _, m := range d.Modes {
			r, err := Run(scenario.Test{System: d.System, SystemOptions: d.SystemOptions, Storage: m.Storage, FenceReads: m.FenceReads,
				Seed: 1, Time: 20 * time.Second})
			require.NoError(t, err, "%s in %s", d.Name, m.StorageName())
			for _, v := range r.Verdicts {
				if v.Check == "mutual-exclusion" || v.Check == "mutex" || v.Check == "lease" {
					if d.SystemOptions["mode"] == "optimistic" {
						continue // no lock: every client "holds" at once
					}
				}
				assert.Equal(t, models.Valid, v.Result, "%s in %s: %s: %s", d.Name, m.StorageName(), v.Check, v.Reason)
			}
			r.Release()
		}
	}
}

// TestChubbyCheckModeWritesThroughCheckSequencer: Chubby's sequencer design
// in check mode runs, and every write the storage applies was first checked
// with the cell (CheckSequencer) and found current.
func TestChubbyCheckModeWritesThroughCheckSequencer(t *testing.T) {
	i := slices.IndexFunc(system.Designs(), func(d system.Design) bool {
		return d.System == "chubby" && slices.ContainsFunc(d.Modes, func(m system.DesignMode) bool { return m.Storage == storage.Check })
	})
	require.GreaterOrEqual(t, i, 0, "no chubby design in check mode")
	d := system.Designs()[i]
	p, err := Prepare(scenario.Test{System: d.System, SystemOptions: d.SystemOptions, Storage: storage.Check, Seed: 1, Time: 20 * time.Second})
	require.NoError(t, err)
	checked, current := 0, 0
	check := p.Storage.Options.Checker
	require.NotNil(t, check, "check mode without CheckSequencer")
	p.Storage.Options.Checker = func(proc *sim.Proc, key string, token uint64) (bool, error) {
		ok, err := check(proc, key, token)
		checked++
		if ok && err == nil {
			current++
		}
		return ok, err
	}
	r, err := p.Run()
	require.NoError(t, err)
	assert.Equal(t, models.Valid, r.Overall)
	writes := r.Summary.Ops["write"]
	require.Positive(t, writes.OK, "no write landed")
	assert.Equal(t, writes.OK, current, "every write that landed was checked current")
	assert.GreaterOrEqual(t, checked, writes.OK)
	assert.True(t, strings.HasSuffix(d.Flags(system.DesignMode{Storage: storage.Check}), "--storage check"))
}
