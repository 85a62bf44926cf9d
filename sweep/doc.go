// Package sweep runs a grid of simulated runs — rows (a lock design: system
// and options, workload, storage mode) × columns (fault families) × seeds —
// on every core, keeps one compact record per run, and turns the records into
// the safety matrix (matrix.json, matrix.csv, matrix.html and a safety-vs-cost
// plot).
//
// # The grid
//
// A Grid lists its rows, its columns and its seeds. CatalogGrid builds the
// default one from the registries: one row per distinct design among the
// catalog's variants plus each registered system with its defaults, each in
// every storage mode it supports (unfenced; fenced and fenced with fenced
// reads when its grants carry tokens), so a new system or catalog variant adds
// rows without a change here. A user's grid is a JSON file (ReadGridFile).
//
// Runs are expanded in a stable order (row, column, seed) and each has a
// stable id (row id / column / seed); the row id is a hash of the row's
// configuration, so ids do not depend on the order rows are listed in.
//
// # Invariants
//
//   - Deterministic: each world is single-threaded and seeded; search checks
//     run with a step budget, never a wall-clock one; records hold no machine
//     time. The output directory's records.jsonl and matrix files are byte
//     for byte the same for any -j, any sharding (after merge) and any number
//     of interruptions.
//   - Durable: finished runs are appended to journal.jsonl and fsync'd in
//     batches; a sweep started again on the same directory (resume) reads the
//     journal, drops a torn last line, and runs only what is missing.
//   - Checked: every journal and records.jsonl line must be a record of the
//     grid as a sweep writes it (its run in the grid, its results valid,
//     invalid or unknown and consistent, its bytes its own encoding, a run
//     recorded twice recorded the same); any other line is refused naming the
//     line and how to repair the journal, never let change the matrix. Only a
//     torn last line (no newline: a kill mid-write) is cut away.
//   - Exclusive: a sweep (and merge, and Finish) holds its directory's
//     sweep.lock with flock(2); a second sweep of the directory is refused,
//     naming the first one's pid. The kernel drops the lock however its
//     holder ends, so a killed sweep leaves no stale lock, and the next start
//     removes the half-written run directories and temporary files it left.
//   - Cheap: a run keeps a record of a few hundred bytes; full run directories
//     are written for the first failing seed of each cell only (Keep).
package sweep
