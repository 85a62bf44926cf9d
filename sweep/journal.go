package sweep

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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

// openJournal opens (or creates) dir's journal for appending after reading
// what it holds: each complete line is passed to seen with its offset and
// length; a torn last line (a write cut off by a kill) is cut away.
func openJournal(path string, seen func(line []byte, off int64) error) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	good, err := scanJournal(f, seen)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
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

// scanJournal passes each complete, well-formed line to seen and returns the
// offset after the last one. Only the last line may be torn: a malformed line
// followed by others is an error.
func scanJournal(r io.Reader, seen func(line []byte, off int64) error) (int64, error) {
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
			return off, err
		}
		lineNo++
		body := bytes.TrimSuffix(line, []byte("\n"))
		if !json.Valid(body) {
			if _, err := br.Peek(1); errors.Is(err, io.EOF) {
				return off, nil // torn last line
			}
			return off, fmt.Errorf("line %d is not JSON, and lines follow it", lineNo)
		}
		if err := seen(body, off); err != nil {
			return off, fmt.Errorf("line %d: %w", lineNo, err)
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
