// Package sim is locklab's deterministic world: virtual time, seeded randomness,
// a simulated network, nodes with their own clocks, and the fault primitives a
// nemesis composes (partition, clock jump and drift, pause, crash/restart).
//
// sim knows nothing about locks. Lock servers, storage and clients are built on
// top of it by the backends and workloads packages.
//
// # Time and events
//
// Virtual time is a time.Duration since the start of the run. There is exactly
// one event queue, ordered by (time, sequence number); the sequence number is
// assigned when an event is scheduled, so ties are broken by scheduling order and
// never by map order or pointer values. Nothing in this package reads the
// machine's clock.
//
// # Randomness
//
// A World has one seed. Every component asks for its own stream by name
// (World.Rand); the stream is a PCG source keyed by (seed, FNV-64a(name)), so
// adding a component never shifts the randomness of the others. There is no
// global or crypto randomness.
//
// # Nodes and clocks
//
// A Node is a server, a client or the protected storage. Each node has a
// monotonic clock (true time scaled by a drift rate; never jumps) and a wall
// clock (the monotonic clock plus an offset that jumps move forwards or back).
// Timers are set in local monotonic durations and are re-planned when the drift
// changes, so drift acts on them the way it acts on real timers, while wall-clock
// jumps do not (as with CLOCK_MONOTONIC). A model that keys expiry on the wall
// clock reads Node.Wall and compares; that is what a clock jump exploits.
//
// Every event that belongs to a node (a message delivery, a timer, the
// resumption of one of its processes) is gated by the node's state: while the
// node is paused the events queue up and run, in order, when it resumes (timers
// fire late, messages wait — a GC pause); while it is down (crashed) they are
// dropped, and events scheduled before a crash never run after the restart.
//
// # Server models and client processes
//
// A server model is a Handler: a plain struct whose Start and Receive methods
// the event loop calls. It never blocks and never starts goroutines; it reacts
// to messages and timers and replies with Node.Send or Node.Reply.
//
// Client programs are ordinary sequential Go, run as processes (Proc) spawned on
// a node. A process blocks only through the kernel: Proc.Sleep, Proc.Call (a
// request with a timeout), Proc.CallAll (requests to several nodes at once, as
// a client fans out with one goroutine per server), Proc.Recv. Each process is a runtime coroutine made
// with iter.Pull: the kernel resumes it by calling next and it hands control
// back by calling yield. We chose iter.Pull over a hand-rolled goroutine
// hand-off because the runtime switches coroutines directly (no scheduler
// round-trip, no channels), so exactly one thing runs at any moment by
// construction rather than by discipline, a switch costs on the order of 100 ns
// (BenchmarkProcSwitch), and stopping a coroutine (crash, end of run) unwinds it
// cleanly: yield returns false and the process panics with a private sentinel
// that its top frame recovers, running its deferred functions.
//
// A pause of a client node delays the resumption of its processes, exactly what
// a GC pause does to a real program; a process that is running when its node is
// paused stops at its next blocking call, before anything leaves the node.
//
// # Network
//
// Messages are plain Go values. Each directed link has a latency distribution,
// loss, duplication and reordering probabilities, and is FIFO by default (as a
// TCP connection is). Partitions are sets of blocked directed links, checked
// when a message is sent and again when it would be delivered, so one-way cuts
// work. Rules delay or drop chosen messages (per-message delay injection).
//
// What a cut does with the messages it catches (sent on the link, or in
// flight on it when they would arrive) is a choice of the world
// (Config.Cuts, Network.SetCuts), made when the cut is made:
//
//   - CutDrops, the zero value: datagram semantics. The cut drops them.
//   - CutHolds (what a harness test uses unless told otherwise):
//     connection semantics, as every client modelled here talks
//     over TCP, and as a TCP connection across an iptables cut (Jepsen's
//     partitions) behaves. The cut holds them, per directed link in send
//     order, and the heal delivers them one latency later (after any delay a
//     rule added, and after everything still in flight on the link, which is
//     held in its turn), before anything sent after the heal: late, the
//     classic hazard of a stale request applied after the heal. When a
//     message has waited longer than the connection timeout
//     (Config.ConnTimeout, DefaultConnTimeout) the connection resets: what
//     it held and what is in flight on it is lost, and what is sent
//     afterwards waits on a new connection. A connection with nothing to
//     deliver does not time out, however long the cut. A message whose sender or receiver crashed while it was
//     held is lost as well: the connection died with its end. The reset is
//     silent: a caller learns of it by its own timeout, as a real client
//     learns of a dead connection by its read timeout or keep-alive.
//
// A lossy cut (Network.BlockLossy) drops whatever the world's choice: a link
// that loses packets for good. Link.Loss stays a lossy link in both modes.
//
// # Determinism
//
// The same seed and configuration give the same sequence of events, and so a
// byte-identical history; the harness tests prove it for every fault primitive.
// A broken invariant inside the simulator panics with context.
package sim
