// Package nemesis turns fault schedules into faults in a simulated world.
//
// A Schedule is data: a list of Faults, each a kind (pause, crash, partition,
// clock-jump, clock-drift, delay), the nodes it acts on by name, when it starts
// — at a time since the start of the run, or right after a history event such as
// "client c1's next acquire returns ok" — and how long it lasts. Schedules are
// JSON (see Schedule), so a run's schedule is stored with it, a person can edit
// it, and `locklab run --nemesis-file` replays it without recompiling.
//
// Targets are names resolved when the fault starts, not when the schedule is
// read: a node's name, or a role the system resolves at that moment —
// "primary" is whichever Redis instance the monitor considers primary then,
// "replicas" the others. So a schedule can say "cut the current primary off
// right after client 1's acquire returns" and mean it after a failover too.
//
// A partition's cuts drop or hold what they catch as the world's cuts do
// (sim.Network.SetCuts); a partition marked Lossy drops whatever the world's
// mode (sim.Network.BlockLossy).
//
// Random draws a schedule from a seeded stream and a RandomConfig; a random run
// therefore stores a concrete schedule like any other. It draws pauses of
// clients and servers, crashes, clock jumps and drift on single nodes,
// partitions of every shape (isolate a node, split everything in two, a one-way
// cut, one client cut off from some servers), and message delays on every kind
// of link (client to storage, client to server, server to server — replication
// lag), aiming at the system's roles as well as at plain nodes. With Swarm each
// seed also draws which kinds are on, their weights and the rate of faults.
//
// Mistakes are refused with an *Error naming the file, the line, the fault
// (faults[i]) and the field, and the valid choices: Parse checks the file's
// syntax, field names and types, and Validate what a fault needs and what its
// kind takes (a trigger's function and event type included); Install checks
// the names only the deployed system knows (nodes and roles, which nodes are
// clients, the message types a delay's match may name), keeping the file and
// line of a schedule read by Parse.
//
// Every fault records a start and a stop event in the history (process -1), so
// the checks and reports see the fault windows in the same stream as the
// clients' operations. A valid fault can still miss (its trigger never
// happens, it is due after the run ends, its delay matches no message, its
// targets name no node when it starts): Nemesis.Outcomes says, fault by
// fault, whether it fired and why not, so that a run never passes for a run
// under faults when its faults did nothing.
//
// Invariant: the nemesis acts only through sim's fault primitives and the
// world's event queue; it reads no machine clock and no global randomness.
package nemesis
