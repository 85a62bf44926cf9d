package sweep

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// MergeReport says what a merge found.
type MergeReport struct {
	// Runs is the number of runs in the merged sweep.
	Runs int
	// Duplicates counts the runs recorded in more than one directory (all of
	// which agreed byte for byte).
	Duplicates int
}

// MismatchError marks directories that cannot be merged (another grid,
// missing runs).
type MismatchError struct{ msg string }

func (e *MismatchError) Error() string { return e.msg }

// DisagreeError marks two directories that recorded one run differently: the
// simulation was not deterministic, or a file was changed.
type DisagreeError struct{ msg string }

func (e *DisagreeError) Error() string { return e.msg }

// Merge combines the journals of sweep directories of one grid (shards, or
// interrupted sweeps) into out: a complete sweep directory (its manifest as
// an unsharded sweep, journal.jsonl and records.jsonl in grid order). Every
// directory must hold the same grid, together they must hold every run, and a
// run recorded in several must be recorded byte for byte the same.
func Merge(out string, dirs []string) (MergeReport, error) {
	if len(dirs) == 0 {
		return MergeReport{}, &MismatchError{"merge: no directories"}
	}
	var g Grid
	var fingerprint string
	type source struct {
		dir int
		s   span
	}
	var where []source
	var rep MergeReport
	for d, dir := range dirs {
		m, err := ReadManifest(dir)
		if err != nil {
			return rep, err
		}
		if d == 0 {
			g, fingerprint = m.Grid, m.Fingerprint
			where = make([]source, g.NumRuns())
		} else if m.Fingerprint != fingerprint {
			return rep, &MismatchError{fmt.Sprintf("merge: %s holds another grid (fingerprint %s) than %s (fingerprint %s)",
				dir, m.Fingerprint, dirs[0], fingerprint)}
		}
		journal := filepath.Join(dir, JournalFile)
		f, err := os.Open(journal)
		if err != nil {
			return rep, fmt.Errorf("merge: %w", err)
		}
		_, err = scanJournal(journal, f, func(line []byte, off int64) error {
			i, _, err := parseRecord(g, line)
			if err != nil {
				return err
			}
			s := span{off, int32(len(line))}
			if where[i].s.len == 0 {
				where[i] = source{d, s}
				return nil
			}
			prev, err := readSpan(filepath.Join(dirs[where[i].dir], JournalFile), where[i].s)
			if err != nil {
				return err
			}
			if where[i].dir == d && where[i].s == s {
				return nil
			}
			if !bytes.Equal(prev, line) {
				return &DisagreeError{fmt.Sprintf("merge: %s and %s disagree on run %s:\n  %s\n  %s", dirs[where[i].dir], dir,
					g.RunAt(i).ID, prev, line)}
			}
			rep.Duplicates++
			return nil
		})
		f.Close()
		if err != nil {
			return rep, fmt.Errorf("merge: %w", err)
		}
	}
	missing := 0
	for i := range where {
		if where[i].s.len == 0 {
			missing++
		}
	}
	if missing > 0 {
		return rep, &MismatchError{fmt.Sprintf("merge: %d of %d runs are missing from the directories given (a shard not given, or not finished: resume it first)",
			missing, g.NumRuns())}
	}
	rep.Runs = g.NumRuns()
	unlock, err := LockDir(out)
	if err != nil {
		return rep, err
	}
	defer unlock()
	m := Manifest{Format: manifestFormat, Fingerprint: fingerprint, Grid: g}
	if err := prepareDir(out, m); err != nil {
		return rep, err
	}
	line := func(i int) ([]byte, error) {
		return readSpan(filepath.Join(dirs[where[i].dir], JournalFile), where[i].s)
	}
	if err := writeRecords(filepath.Join(out, JournalFile), g, Shard{}, line); err != nil {
		return rep, err
	}
	return rep, writeRecords(filepath.Join(out, RecordsFile), g, Shard{}, line)
}
