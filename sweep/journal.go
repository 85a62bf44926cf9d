package sweep

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// JournalFile is the append-only record of finished runs, one JSON line each,
// in the order they finished.
const JournalFile = "journal.jsonl"

// journal appends records durably: each line is written to the file as soon
// as its run finishes (a SIGKILL loses none: the kernel holds it), and the
// file is fsync'd in batches (every syncEvery or syncRecords lines), so a
// machine crash loses at most one batch.
type journal struct {
	f        *os.File
	unsynced int
	lastSync time.Time
	// syncEvery and syncRecords bound a batch.
	syncEvery   time.Duration
	syncRecords int
	size        int64
}

// journaled does the work of a sweep or a matrix in dir, holding the
// directory for this process (LockDir) from start to end: it lets prepare
// write or check the manifest, removes what a killed run left half written
// and opens the journal, the file name of dir, handing seen each line
// recorded before; then, with the collector tuned for many worlds (TuneGC),
// it runs work with the journal, closes the journal, and when both went well
// runs finish, which writes what the journal's records make.
func journaled(dir string, prepare func() error, name string, seen func(line []byte, off int64) error,
	work func(*journal) error, finish func() error) error {
	unlock, err := LockDir(dir)
	if err != nil {
		return err
	}
	defer unlock()
	if err = prepare(); err == nil {
		err = removeLeftovers(dir)
	}
	if err != nil {
		return err
	}
	j, err := openJournal(filepath.Join(dir, name), seen)
	if err != nil {
		return err
	}
	defer TuneGC()()
	err = work(j)
	if cerr := j.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return finish()
}

// openJournal opens (or creates) dir's journal for appending after reading
// what it holds: each complete line is passed to seen with its offset and
// length; a torn last line (a write cut off by a kill: no newline) is cut
// away. A complete line that is not JSON, or that seen refuses, is a
// *DamagedJournalError.
func openJournal(path string, seen func(line []byte, off int64) error) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	good, err := scanJournal(path, f, seen)
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: cutting a torn last line: %w", path, err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return &journal{f: f, lastSync: time.Now(), syncEvery: time.Second, syncRecords: 1000, size: good}, nil
}

// DamagedJournalError says that a line of a journal is not a record of its
// grid, and how to repair the journal.
type DamagedJournalError struct {
	// Path is the journal; Line the damaged line (from 1).
	Path string
	Line int
	// Why says what is wrong with the line.
	Why string
}

func (e *DamagedJournalError) Error() string {
	return fmt.Sprintf("journal %s line %d: %s. The journal is damaged (edited, or a disk error): "+
		"delete that line (sed -i '%dd' %s) and resume the sweep (locklab sweep --resume %s), which runs the line's run again; "+
		"or start afresh in another directory", e.Path, e.Line, e.Why, e.Line, e.Path, filepath.Dir(e.Path))
}

// scanJournal passes each complete, well-formed line to seen and returns the
// offset after the last one. Only the last line may be torn — cut off before
// its newline, as a kill in the middle of a write leaves it — and is left out;
// a complete line that is not JSON or that seen refuses is a
// *DamagedJournalError (a *DisagreeError from seen is returned as it is).
func scanJournal(path string, r io.Reader, seen func(line []byte, off int64) error) (int64, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var off int64
	lineNo := 0
	for {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			// A last line without its newline was cut off mid-write.
			return off, nil
		}
		if err != nil {
			return off, fmt.Errorf("journal %s: %w", path, err)
		}
		lineNo++
		body := bytes.TrimSuffix(line, []byte("\n"))
		if !json.Valid(body) {
			return off, &DamagedJournalError{Path: path, Line: lineNo, Why: "not JSON"}
		}
		if err := seen(body, off); err != nil {
			var de *DisagreeError
			if errors.As(err, &de) {
				return off, err
			}
			return off, &DamagedJournalError{Path: path, Line: lineNo, Why: err.Error()}
		}
		off += int64(len(line))
	}
}

// append writes one record line; it returns the line's offset and length.
func (j *journal) append(line []byte) (int64, error) {
	off := j.size
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return 0, fmt.Errorf("journal: %w", err)
	}
	j.size += int64(len(line)) + 1
	j.unsynced++
	if j.unsynced >= j.syncRecords || time.Since(j.lastSync) >= j.syncEvery {
		return off, j.sync()
	}
	return off, nil
}

// appendJSON writes v, marshalled, as one record line and returns where the
// line stands.
func (j *journal) appendJSON(v any) (span, error) {
	line, err := json.Marshal(v)
	if err != nil {
		return span{}, err
	}
	off, err := j.append(line)
	if err != nil {
		return span{}, err
	}
	return span{off, int32(len(line))}, nil
}

func (j *journal) sync() error {
	if j.unsynced == 0 {
		return nil
	}
	j.unsynced, j.lastSync = 0, time.Now()
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal: fsync: %w", err)
	}
	return nil
}

// close syncs and closes the journal.
func (j *journal) close() error {
	err := j.sync()
	if cerr := j.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("journal: %w", cerr)
	}
	return err
}
