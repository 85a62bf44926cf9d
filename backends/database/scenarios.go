package database

import (
	"time"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// The catalog's families of this system (see scenario.Register).
func init() {
	scenario.Register("database", databaseScenarios)
	scenario.Register("database", databaseOncallScenarios)
}

// dbTest is a database test of the catalog: seed 1, the given clients and
// duration, system options as key=value pairs.
func dbTest(clients int, d time.Duration, s *nemesis.Schedule, opts ...string) scenario.Test {
	return scenario.Test{System: "database", Clients: clients, Seed: 1, Time: d, Schedule: s, SystemOptions: scenario.WithOpts(nil, opts...)}
}

func databaseScenarios() []scenario.Scenario {
	return []scenario.Scenario{
		{
			Name:     "baseline-database",
			Doc:      "the database locks, each mode, no faults: every check valid (optimistic has no lock: only its critical sections are judged)",
			Variants: dbBaselineVariants(),
		},
		{Name: "kleppmann-gc-pause", Variants: []scenario.Variant{
			{Name: "database-unsafe", Kind: scenario.KindGCPause, Doc: "database unique-row (10 s expiry), unfenced storage: the stale write lands after client 2's",
				Test:   dbTest(2, 30*time.Second, scenario.Schedule(scenario.PauseAfter("c1", "read", 15*time.Second)), "mode", "unique-row"),
				Expect: scenario.Expect(models.Invalid, models.Invalid)},
			{Name: "database-fixed", MatrixNote: scenario.FencedWritesNote, Doc: "fenced storage with the server's grant number as token: the stale write is rejected",
				Test:   scenario.Fenced(dbTest(2, 30*time.Second, scenario.Schedule(scenario.PauseAfter("c1", "read", 15*time.Second)), "mode", "unique-row")),
				Expect: scenario.Expect(models.Valid, models.Invalid).And("fencing-tokens", models.Valid), Assert: scenario.WritesRejected(1)},
		}},
		{Name: "kleppmann-network-delay", Variants: []scenario.Variant{
			{Name: "database-unsafe", Kind: scenario.KindDelayedWrite, Doc: "database unique-row, unfenced storage: the late write overwrites newer data",
				Test: dbTest(2, 30*time.Second, scenario.Schedule(scenario.DelayNextWrite("c1", 15*time.Second)), "mode", "unique-row"), Expect: scenario.Expect(models.Invalid, models.Valid)},
			{Name: "database-fixed", Doc: "fenced storage with the grant number as token: the late write is rejected",
				Test:   scenario.Fenced(dbTest(2, 30*time.Second, scenario.Schedule(scenario.DelayNextWrite("c1", 15*time.Second)), "mode", "unique-row")),
				Expect: scenario.Expect(models.Valid, models.Valid).And("fencing-tokens", models.Valid)},
		}},
		{
			Name: "db-unlock-before-commit",
			Doc: "unique-row lock, the counter in the database: the lock row is deleted before the data's transaction " +
				"commits; the next holder reads the old value",
			Variants: []scenario.Variant{
				{Name: "unsafe", NoHunt: "it fails without any fault: the release comes before the commit by design, so random faults add nothing to find", Doc: "unlock-before-commit: the commit comes 200 ms after the release; the next holder's read misses it: lost update",
					Test:   dbTest(2, 20*time.Second, nil, "mode", "unique-row", "resource", "db", "unlock-before-commit", "true"),
					Expect: scenario.Expect(models.Invalid, models.Valid)},
				{Name: "fixed", Doc: "commit (autocommit write) before the release: valid",
					Test: dbTest(2, 20*time.Second, nil, "mode", "unique-row", "resource", "db"), Expect: scenario.Expect(models.Valid, models.Valid)},
			},
		},
		{
			Name: "db-clock-skew",
			Doc: "client 2's wall clock jumps 20 s ahead while client 1 holds: a unique-row acquirer judges client 1's " +
				"live row expired by its own clock and takes it over",
			Variants: dbClockSkewVariants(),
		},
		{
			Name: "db-connection-stall",
			Doc: "the for-update holder stalls (pause) for 10 s, past the server's 5 s connection timeout: the server " +
				"aborts its transaction and releases its row lock; client 2 acquires",
			Variants: dbStallVariants(),
		},
	}
}

func dbBaselineVariants() []scenario.Variant {
	all := scenario.Expect(models.Valid, models.Valid).And("liveness", models.Valid)
	var out []scenario.Variant
	for _, m := range []string{"unique-row", "for-update", "advisory"} {
		out = append(out, scenario.Variant{Name: m, Doc: "mode=" + m + ", counter in the storage node, no faults",
			Test: dbTest(5, time.Minute, nil, "mode", m), Expect: all, Assert: scenario.AllOf(scenario.AcquireSuccessAbove(0.99), scenario.TokensMonotonic)})
	}
	out = append(out,
		scenario.Variant{Name: "for-update-db", Doc: "mode=for-update with the counter in the same database, written in the lock's transaction",
			Test: dbTest(5, time.Minute, nil, "mode", "for-update", "resource", "db"), Expect: all, Assert: scenario.AcquireSuccessAbove(0.99)},
		scenario.Variant{Name: "optimistic", Doc: "no lock: version compare-and-swap; every critical section that commits is atomic (conflicting writes are rejected)",
			Test:   dbTest(5, time.Minute, nil, "mode", "optimistic"),
			Expect: scenario.Expectations{"critical-sections": models.Valid}, Assert: scenario.WritesRejected(1)},
	)
	return out
}

func dbClockSkewVariants() []scenario.Variant {
	jump := scenario.Schedule(nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{"c2"}, At: nemesis.Duration(5 * time.Second),
		Amount: nemesis.Duration(20 * time.Second)})
	t := func(mode string) scenario.Test {
		return scenario.WithWorkload(dbTest(2, 20*time.Second, jump, "mode", mode), "hold", "1s")
	}
	return []scenario.Variant{
		{Name: "unsafe", Kind: scenario.KindHolderClock, Doc: "unique-row: client 2 takes over client 1's live row; both run their read-modify-write at once",
			Test: t("unique-row"), Expect: scenario.Expect(models.Invalid, models.Invalid), Assert: scenario.StoryMentions("row-taken-over")},
		{Name: "fixed", Doc: "for-update: the row lock does not depend on any client's clock",
			Test: t("for-update"), Expect: scenario.Expect(models.Valid, models.Valid)},
	}
}

func dbStallVariants() []scenario.Variant {
	t := func(resource string) scenario.Test {
		return dbTest(2, 30*time.Second, scenario.Schedule(scenario.PauseAfter("c1", "read", 10*time.Second)), "mode", "for-update", "resource", resource)
	}
	return []scenario.Variant{
		{Name: "unsafe", Kind: scenario.KindSessionExpiry, Doc: "the data in external storage: client 1 wakes and writes its stale value over client 2's",
			Test: t("storage"), Expect: scenario.Expect(models.Invalid, models.Invalid), Assert: scenario.StoryMentions("transaction-aborted")},
		{Name: "fixed", Doc: "the data in the same database, written in the lock's transaction: the transaction was aborted, client 1's write is rejected",
			Test: t("db"), Expect: scenario.Expect(models.Valid, models.Invalid), Assert: scenario.AllOf(scenario.WritesRejected(1), scenario.StoryMentions("transaction-aborted"))},
	}
}

// databaseOncallScenarios are the on-call write skew on the database: its
// optimistic and for-update locks (see redisOncallScenarios).
func databaseOncallScenarios() []scenario.Scenario {
	db := func(opts ...string) scenario.Test {
		t := dbTest(2, 20*time.Second, nil, opts...)
		t.Workload = "oncall"
		return t
	}
	onCall := func(r models.Result) scenario.Expectations { return scenario.Expectations{"on-call": r} }
	return []scenario.Scenario{{
		Name: "oncall-write-skew",
		Variants: []scenario.Variant{
			{Name: "optimistic-row-unsafe",
				NoHunt: "it fails without any fault: two doctors without a lock decide on the same state by design",
				Doc: "database optimistic, per-row versions, no lock: both doctors read both rows, each compare-and-swaps " +
					"only its own row, both succeed — the write skew a per-row compare-and-swap cannot see " +
					"(every critical section is atomic on its own row: critical-sections is valid)",
				Test: db("mode", "optimistic"), Expect: onCall(models.Invalid).And("critical-sections", models.Valid)},
			{Name: "optimistic-pair-fixed",
				Doc: "database optimistic, versions=pair: each write compares the versions of both rows read; the " +
					"second doctor's write fails because the first's changed a row it read",
				Test: db("mode", "optimistic", "versions", "pair"), Expect: onCall(models.Valid), Assert: scenario.WritesRejected(1)},
			{Name: "for-update-fixed",
				Doc: "database for-update with the rows in the database, read and written in the lock's transaction: " +
					"the doctors' turns are serialized",
				Test: db("mode", "for-update", "resource", "db"), Expect: onCall(models.Valid).And("critical-sections", models.Valid)},
		},
	}}
}
