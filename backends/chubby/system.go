package chubby

import (
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

func init() {
	system.Register(system.System{
		Name: "chubby",
		// A holder paused, cut off or delayed for less than this keeps its
		// lock: such faults do not test the design. Another client gets it
		// a lock-delay after the master expired the session (the client's
		// grace period is its own belief and hands nothing over).
		Timeouts: []system.Timeout{{Kinds: []string{"pause", "partition", "delay"}, Option: "lease", What: "the session lease", Then: "lock-delay"}},
		GroundTruth: []system.Truth{
			{Label: "chubby", Storage: storage.Fenced, FenceReads: true},
			{Label: "chubby-check", Storage: storage.Check},
		},
		Recorded: []system.Recorded{
			{Label: "chubby", Nemesis: "random", Seeds: system.Seeds(1, 2), Time: 20 * time.Second},
			{Label: "chubby", Nemesis: "random", Seeds: system.Seeds(11, 2), Time: 20 * time.Second, Trace: true},
		},
		Doc: "Chubby cell (cb1..cb5, an elected master): session leases extended by KeepAlive and expired by the master, " +
			"exclusive locks with sequencers (generation tokens), lock-delay",
		Options: Table,
		Deploy:  system.DeployService(Table, NewCell, (*Cell).NewClient, deployChubby),
		Claims: []system.Claims{
			// Lock-delay (1 min) outlasts the suite's pause: the unfenced GC
			// pause stays valid by design, so the suite runs without it.
			{Options: map[string]string{"lock-delay": "0s"}, Tokens: true, SafeRelease: true},
		},
		Designs: []system.Design{
			{Name: "Chubby lock with lock-delay", Modes: system.UnfencedOnly},
			{Name: "Chubby + sequencer", Modes: []system.DesignMode{
				{Storage: storage.Check, Guard: system.GuardSequencer},
				{Storage: storage.Fenced, Guard: system.GuardFencing},
				{Storage: storage.Fenced, FenceReads: true, Guard: system.GuardFencingReads},
			}},
		},
	})
}

// deployChubby hands the run what the cell records and offers. Schedules
// may name "master" and "replicas".
func deployChubby(w *sim.World, _ Options, c *Cell) system.Deployment {
	var log *history.Log
	c.OnEvent = func(ev Event) {
		if log == nil {
			return
		}
		switch ev.F {
		case system.EventSessionExpired:
			system.RecordEvent(log, w, ev.F, ev.Targets, ev.Detail)
		case system.EventLockDelay:
			// A window from the start of the master's lock-delay of the lock
			// to its end: the liveness check counts the lock as held back by
			// design, not free, while it lasts.
			t := history.Start
			if ev.Over {
				t = history.Stop
			}
			log.Append(history.Event{Time: int64(w.Now()), Process: history.NemesisProcess, Type: t, F: string(ev.F),
				Key: ev.Lock, Targets: ev.Targets, Detail: ev.Detail})
		}
	}
	return system.Deployment{
		HasTokens: true,
		Roles:     Roles(),
		Record:    func(l *history.Log) { log = l },
		Messages:  MessageTypes(),
		Check:     c.CheckSequencer,
		Figures: func() map[string]any {
			return map[string]any{"elections": c.Elections, "sessions_expired": c.Expired, "lock_delays": c.Delays}
		},
	}
}
