// Package history is the record of a run: what every client invoked and saw,
// and every fault the nemesis started and stopped, in one stream of events.
//
// The checks in package models read a history and nothing else, so a history
// recorded from a real system (by any tool, in any language) can be checked the
// same way as one recorded in the simulator. This comment is the format's
// specification.
//
// # Format, version 1
//
// A history is a JSON Lines file: one JSON object per line, UTF-8, no blank
// lines except at the end. The first line may be a header
//
//	{"format":"locklab-history","version":1}
//
// (without it, version 1 is assumed). Every other line is an event:
//
//	{"index":3,"time":1204000,"process":0,"node":"c1","type":"ok","f":"acquire","key":"k","owner":"c1-1","token":2,"clock":1203000,"deadline":10201000}
//
// Fields (times and durations are integers in nanoseconds):
//
//	index     position in the history, 0, 1, 2, ... (optional: defaults to the line's position)
//	time      true time of the event since the start of the run; never decreases
//	process   the logical process that performed the operation (>= 0), or -1 for the nemesis
//	node      the client (or, for the nemesis, nothing) the process runs on; events of one
//	          client share it across processes
//	type      invoke | ok | fail | info for operations; start | stop for nemesis faults
//	f         the function: acquire, release, renew, read, write, append, begin, commit
//	          (operations) or the fault kind (pause, partition, clock-jump, clock-drift, crash, delay, ...)
//	key       the lock key (acquire, release, renew) or the resource key (read, write, append)
//	owner     the acquisition's identity: the lock value or acquirer id (acquire, release, renew,
//	          and the storage operations, begin and commit made under it)
//	token     the fencing token: granted (acquire/renew ok) or presented (read, write, release)
//	value     the number read (read ok), written (write invoke and completion) or appended
//	          (append invoke and completion)
//	values    the list read (read ok of a list resource; [] is the empty list)
//	clock     the node-local monotonic clock reading at the event, where it matters
//	deadline  the holder's own lease deadline as a true time (acquire ok, renew ok); absent
//	          for locks without leases. Recorders outside a simulator use time + remaining lease.
//	targets   the nodes a fault acts on (nemesis events)
//	detail    free text: what a fault did, or why an operation failed
//
// Fields a reader does not need may be left out; unknown fields are an error.
// Later versions of this package may add optional fields to version 1 (values
// was added so); a history that uses none of them reads the same everywhere.
//
// # Resources
//
// The storage a lock protects is recorded as reads and writes (or appends) of
// keys. A counter or a stock level is a number: read returns value, write sets
// value. A list is read whole (values) and grows by append. A critical section
// is a successful read followed by the same process's next operation, if that is
// a write or append of the same key.
//
// # Transactions
//
// A storage whose writes are buffered in a transaction (a database row
// written inside the lock's transaction, say) records when the transaction
// opens and when it commits, so that a write acknowledged inside it is not
// taken as applied before it is committed:
//
//	{"index":7,"time":1300000,"process":5,"node":"c1","type":"invoke","f":"begin","key":"k","owner":"c1#2"}
//	{"index":8,"time":1300000,"process":5,"node":"c1","type":"ok","f":"begin","key":"k","owner":"c1#2"}
//	...
//	{"index":12,"time":1500000,"process":5,"node":"c1","type":"invoke","f":"commit","owner":"c1#2"}
//	{"index":14,"time":1502000,"process":5,"node":"c1","type":"ok","f":"commit","owner":"c1#2"}
//
// begin (invoke and ok; key, when given, is the first key written) says
// that the writes of the acquisition owner that complete after it (a
// recorder may note the begin while the first write is in flight) and were
// invoked before its commit, belong to the transaction. commit is an operation like
// any other: ok (the transaction's writes took effect, at some point
// during the commit), fail (certainly none did: the transaction was aborted
// or its connection had ended) or info (unknown). A transaction without a
// commit never committed (it was rolled back, aborted, lost in a crash of
// the server, or was still open when the history ended): its writes did not
// take effect, however they completed. begin and commit are linked to the
// writes by owner, not by process, so they may be recorded by a process of
// their own (a write of unknown outcome retires its process, and the commit
// comes after it). A write's own outcome still counts: a failed write did
// not happen whatever the commit; an info write inside a committed
// transaction may have happened.
//
// # Operations
//
// An operation is an invoke followed by exactly one completion of the same
// process and function: ok (it happened), fail (it certainly did not happen) or
// info (unknown: it may have happened, at any time after the invoke, or never).
// The node, key and owner of an operation may be recorded on its invoke, on
// its completion or on both (a recorder of SET NX knows its value before the
// request); the checks read each from whichever event carries it (Complete),
// and where both carry one they must be equal. A process performs one
// operation at a time. An operation without a completion
// at the end of the history counts as info. After an info completion a process
// must not invoke again: the client continues as a new process (as in Jepsen),
// keeping its node name.
//
// # Recording for the checks
//
// A recorder outside the simulator gets the most out of the checks when it
//
//   - records every attempt, with its outcome: ok only when the operation
//     certainly happened, fail only when it certainly did not, info otherwise
//     (a timeout of a write or an acquire is info, never fail);
//   - gives every acquisition its own owner (a reentrant acquire by the same
//     acquirer repeats the owner and the token), and the owner again on the
//     release and renew invocations;
//   - records the lease deadline as the true time by which the holder's lease
//     has surely run out on its own clock, measured from before the request
//     (so no later than the server's expiry);
//   - records the token it presents with every read and write, and the value
//     it reads or writes;
//   - writes nemesis events (process -1) around any fault it injects, so
//     counterexamples show the faults and liveness excuses them.
//
// # System events
//
// What the service did by itself that a reader needs (a failover, a session
// it expired) is recorded as nemesis events too (process -1, start and stop,
// usually at the same time): the checks read them as they read faults. One
// has a meaning of its own to the checks:
//
//	lock-delay  start and stop with key: from start to stop the service held the
//	            lock key back by design, granting it to nobody (Chubby's
//	            lock-delay after its holder's session expired); targets name the
//	            server that did, detail why, the same on both events. Without a
//	            key it holds back every lock. The liveness check counts the lock
//	            as held back, not free, meanwhile; it is not a fault.
//
// # Invariants the reader enforces
//
// Indexes are consecutive, times never decrease, types are known, functions are
// not empty (checks ignore functions they do not know),
// operations pair up as described above (with the same node, key and owner
// where both events name one), and nemesis events use process -1.
// Field names are exact (lower case) and appear once; the required fields
// (time, process, type, f) are present and not null. A line is valid UTF-8
// (encoding/json would quietly turn each invalid byte into U+FFFD) and at most
// MaxLineBytes long, the newline not counted, both as read and as Write would
// write the event back (with its index, U+2028 and U+2029 escaped): whatever
// Read accepts, Write can write. Malformed input is rejected with the file,
// the line and the reason.
//
// # Jepsen histories
//
// ReadJepsen reads the history of a Jepsen lock test (history.edn: EDN
// operation maps one after another, usually one per line, or one vector or
// list of them; maps printed as #jepsen.history.Op records too) and maps it
// to events, so that the same checks judge it. ReadJepsenFile also takes the
// test's directory in Jepsen's store (store/<test>/<time>, store/latest) and
// reads its history.edn. The EDN values are read by
// olympos.io/encoding/edn; this package finds where each operation and field
// begins, so every error names the line, and a field given twice is refused.
//
//	Jepsen                          event
//	:time N                         time N (nanoseconds since the test began; required; see below when it
//	                                steps back)
//	:process N                      process N, node "pN" (a crashed process's thread goes on under a new
//	                                number in Jepsen, so each number is its own client)
//	:process :nemesis               a fault (process -1), see below
//	:type :invoke/:ok/:fail/:info   the same type
//	:f :acquire or :lock            acquire
//	:f :release or :unlock          release
//	:f :renew                       renew
//	:index N                        not kept: events are numbered in the history's order, the order of
//	                                the file (a given :index must ascend; it may be absent)
//	:value nil                      nothing
//	:value [k v]                    key k (jepsen.independent's tuple), and v as below
//	:value v                        detail "value v": kept, not interpreted (a fencing token is :token)
//	:key k                          key k; without :key or a tuple, the key is "lock"
//	:owner o                        owner o
//	:token t, :fencing-token t      token t (a whole number, not negative)
//	:ttl d, :lease d                the lease: on an acquire or renew that returns ok, deadline =
//	                                the invocation's time + d (d in nanoseconds, at least 1 ms, or
//	                                a duration string such as "2s"), from the invocation or the completion
//	:error e                        detail "error e"
//
// The history's order is the order in time, as for Knossos and Elle: an
// operation that completes before another's invocation in the file precedes
// it. Jepsen reads a worker's clock before it appends the operation, so a
// :time may be a little earlier (a few milliseconds at most, usually) than
// the one of the line before it, written by another process. Such an
// operation is read at the latest time before it (the checks that order
// operations use their places in the history, and an overlap of two
// holdings must last longer than zero), a lease counts from the :time as
// written, and Jepsen.Steps says how many stepped back and how far at most.
// Within one process (or the nemesis) a :time never goes back.
//
// Any other field is left out and counted (Jepsen.Left), and so is every
// client operation with another :f (a read of the data the lock protects, an
// :add): the checks judge the lock operations alone. Keys, owners and
// targets are at most 200 bytes, an operation at most 1 MiB, and forms nest
// at most 64 deep.
//
// Without :owner, every acquire is an acquisition of its own, "p3#2" for
// process 3's second acquire (Jepsen's mutex is not reentrant: a second grant
// to a process that holds the lock is a grant to another acquirer), and a
// release or renew belongs to its process's last acquire that returned ok,
// until a release returns ok (none if it holds nothing). An owner named on
// the completion alone is the operation's.
//
// Jepsen's nemesis records each operation twice, as it begins and as it
// ends, both :type :info: a nemesis operation with the :f of the one before
// it and a type other than :invoke is its completion (a hand-written history
// may give one operation alone). A fault lasts from the beginning of the
// operation that starts it to the end of the one that stops it:
//
//	:start-X ... :stop-X            fault X (:start-partition ... :stop-partition or :heal: partition)
//	:start ... :stop                fault "nemesis" (the classic nemeses' partitions, clocks, ...)
//	:kill ... :start or :restart    crash (:start ends the crashes when there are any)
//	:pause ... :resume              pause
//	:bump-clock ... :reset-clock    clock-jump
//	:check-clock-offsets            nothing (it measures): left out and counted
//	:strobe-clock                   clock-strobe, while the operation runs
//	any other :f                    a fault of that name while the operation runs
//
// A stop with no fault of its kind under way (the final heal of a test) is
// left out and counted; a stop ends every fault of its kind. A nemesis
// operation that completes with :fail did nothing. The detail is the :f and
// both values (":start-partition :majority -> [:isolated {...}]", each at most
// 200 bytes); the targets are the node names of the completion's value (a
// vector or set of names, or the keys of a map such as a grudge), else of the
// invocation's.
//
// Clojure prints some values that are not EDN (a Java object as
// #object[... 0x1f ...], ##Inf, ##NaN, a regular expression #"...", a ratio
// 1/2): in :value, :error or a field the mapping does not read, such a value
// is kept as written (in the detail) and counted in Jepsen.Left; in the
// fields the mapping interprets it is refused.
//
// Refused, with the line and the field: anything else that is not EDN (a
// string with an unknown escape, at any depth), not UTF-8
// or not an operation map; a missing :type, :f, :process or :time; a type,
// process, time, index, token or lease of the wrong kind; an :index that does
// not ascend; a :time earlier than the same process's before it; a
// field given twice; operations that do not pair up (an invocation while the
// process's last is open, a completion without one or of another :f, a
// process that goes on after :info); a key or owner on a completion that
// differs from its invocation's; :token beside :fencing-token, :ttl beside
// :lease. The events read are a valid history (Validate) that Write can
// write.
package history
