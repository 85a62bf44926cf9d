package sweep

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// LockFile is the file of a sweep directory that its sweep holds locked.
const LockFile = "sweep.lock"

// LockedError says that another process is writing the directory.
type LockedError struct {
	Dir string
	// PID is the process that holds the lock (0: it has not written its pid
	// yet).
	PID int
}

func (e *LockedError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = fmt.Sprintf("process %d", e.PID)
	}
	return fmt.Sprintf("%s is in use: %s is writing it (%s): wait for it, or stop it and run the same command again to resume",
		e.Dir, who, filepath.Join(e.Dir, LockFile))
}

// A sweep directory is locked with flock(2) on its sweep.lock, not with a pid
// file created O_EXCL: the kernel drops a flock when its process ends, however
// it ends (a SIGKILL, a machine crash), so a lock is never stale and a sweep
// killed in any way is resumed by the same command; a pid file would outlive
// a killed sweep and have to be judged stale by whether its pid is alive, which
// a reused pid gets wrong. The holder writes its pid into the file only to
// name itself to the process it refuses; a file left with a dead process's pid
// is simply locked again and overwritten.

// held are the directories this process holds locked, by absolute path: a
// command that locks a directory for the whole of its work (sweep, then
// Finish) calls functions that lock it again, and those share the lock.
var held = struct {
	sync.Mutex
	locks map[string]*dirLock
}{locks: map[string]*dirLock{}}

type dirLock struct {
	f     *os.File
	count int
}

// LockDir locks the sweep directory dir (creating it) for this process, or
// returns a *LockedError naming the process that holds it. Unlock releases
// it. Sweep, Merge and Finish lock the directory they write themselves; a
// caller that runs several of them on one directory locks it around them so
// that no other process gets in between.
func LockDir(dir string) (unlock func(), err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("sweep directory: %w", err)
	}
	held.Lock()
	defer held.Unlock()
	if l, ok := held.locks[abs]; ok {
		l.count++
		return func() { release(abs) }, nil
	}
	if err := checkForeign(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sweep directory: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sweep directory: %w", err)
	}
	locked, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if !locked {
		f.Close()
		return nil, &LockedError{Dir: dir, PID: lockHolder(path)}
	}
	if err := writePID(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	held.locks[abs] = &dirLock{f: f, count: 1}
	return func() { release(abs) }, nil
}

func release(abs string) {
	held.Lock()
	defer held.Unlock()
	l, ok := held.locks[abs]
	if !ok {
		return
	}
	if l.count--; l.count > 0 {
		return
	}
	delete(held.locks, abs)
	// Closing the file drops the lock. The pid is left in the file: the next
	// holder overwrites it, and a reader only trusts it while the file is
	// locked.
	l.f.Close()
}

// checkForeign refuses a directory that holds other files than a sweep's
// before anything is written into it.
func checkForeign(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return nil
	}
	for _, e := range entries {
		if e.Name() == ManifestFile || e.Name() == LockFile {
			return nil
		}
	}
	return &GridMismatchError{Dir: dir, Why: "other files (no " + ManifestFile + ")"}
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// lockHolder reads the pid the holder of a lock wrote; the holder writes it
// just after it took the lock, so an empty file is read again for a moment.
func lockHolder(path string) int {
	for range 50 {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0
		}
		if pid, err := strconv.Atoi(string(bytes.TrimSpace(b))); err == nil && pid > 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}
