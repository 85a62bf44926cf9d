package reports

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The store of runs, after Jepsen's store/: a run written without an explicit
// directory goes to StoreDir/<name>/<start time>, a new directory each time
// (re-running a seed keeps the earlier run), and after each run
// StoreDir/latest points at the newest run, StoreDir/<name>/latest at the
// newest of that name, and StoreDir/index.html lists every run.
const (
	// StoreDir is the store's directory, relative to the working directory.
	StoreDir = "runs"
	// LatestLink is the name of the symbolic link to the newest run (a file
	// holding its path where symbolic links cannot be made).
	LatestLink = "latest"
	// IndexFile is the store's index page.
	IndexFile = "index.html"
	// TimeLayout names a run directory of the store by the UTC time its run
	// started, to the millisecond ("20261127T160102.123Z").
	TimeLayout = "20060102T150405.000Z"
)

// NewStoreRun makes the directory of a new run named name in the store
// store: store/name/<start in TimeLayout>, with a "-2", "-3", ... suffix when
// a run of that name started in the same millisecond. The directory is made
// empty (WriteDir fills it), so two runs never share one. A run directory
// an earlier locklab wrote at store/name itself (one directory per name,
// replaced by each run) is moved first to store/name/<its modification time>,
// and that move is returned in moved ("" when there was none).
func NewStoreRun(store, name string, start time.Time) (dir, moved string, err error) {
	parent := filepath.Join(store, name)
	if moved, err = moveOldRun(parent); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", moved, &OutDirError{Dir: parent, Reason: plainPathError(err).Error()}
	}
	base := start.UTC().Format(TimeLayout)
	for i := 1; i < 1000; i++ {
		dir = filepath.Join(parent, base)
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", dir, i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, moved, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", moved, &OutDirError{Dir: dir, Reason: plainPathError(err).Error()}
		}
	}
	return "", moved, &OutDirError{Dir: parent, Reason: "999 runs of this name started in the same millisecond"}
}

// moveOldRun moves a run directory written before the store kept every run
// (store/name holding results.json) into store/name/<its time>.
func moveOldRun(parent string) (string, error) {
	st, err := os.Stat(filepath.Join(parent, ResultsFile))
	if err != nil {
		return "", nil
	}
	if _, ok := runDirFiles(parent); !ok {
		return "", nil
	}
	tmp := filepath.Join(filepath.Dir(parent), "."+filepath.Base(parent)+".old-"+randomSuffix())
	if err := os.Rename(parent, tmp); err != nil {
		return "", fmt.Errorf("move the earlier run directory %s into the store: %w", parent, err)
	}
	if err := os.Mkdir(parent, 0o755); err != nil {
		_ = os.Rename(tmp, parent)
		return "", fmt.Errorf("move the earlier run directory %s into the store: %w", parent, err)
	}
	to := filepath.Join(parent, st.ModTime().UTC().Format(TimeLayout))
	if err := os.Rename(tmp, to); err != nil {
		return "", fmt.Errorf("move the earlier run directory %s into the store: %w", parent, err)
	}
	return to, nil
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// InStore reports whether dir lies inside the store store (not the store
// itself).
func InStore(store, dir string) bool {
	s, err1 := filepath.Abs(store)
	d, err2 := filepath.Abs(dir)
	return err1 == nil && err2 == nil && strings.HasPrefix(d, s+string(filepath.Separator))
}

// RecordRun records the run directory dir, just written inside the store
// store: store/latest points at it, and so does store/<name>/latest when dir
// is a timestamped run of the store (store/<name>/<time>); then the index
// page is written again. It returns the number of runs the index lists.
// A dir outside the store is not recorded (0, nil).
func RecordRun(store, dir string) (int, error) {
	if !InStore(store, dir) {
		return 0, nil
	}
	s, _ := filepath.Abs(store)
	d, _ := filepath.Abs(dir)
	rel, err := filepath.Rel(s, d)
	if err != nil {
		return 0, fmt.Errorf("record run %s in %s: %w", dir, store, err)
	}
	errs := []error{pointLatest(s, rel)}
	if _, ok := storeTime(filepath.Base(d)); ok && filepath.Dir(d) != s {
		errs = append(errs, pointLatest(filepath.Dir(d), filepath.Base(d)))
	}
	n, err := WriteIndex(store)
	errs = append(errs, err)
	return n, errors.Join(errs...)
}

// pointLatest makes dir/latest point at target (relative to dir): a
// symbolic link made beside it and renamed over it, or, where symbolic links
// cannot be made, a file holding target's path.
func pointLatest(dir, target string) error {
	latest := filepath.Join(dir, LatestLink)
	if st, err := os.Lstat(latest); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory: locklab points %s at the newest run and leaves a directory of that name alone", latest, LatestLink)
	}
	tmp := filepath.Join(dir, "."+LatestLink+".tmp-"+randomSuffix())
	if err := os.Symlink(target, tmp); err != nil {
		return WriteFileAtomic(latest, func(w io.Writer) error {
			_, err := io.WriteString(w, filepath.ToSlash(target)+"\n")
			return err
		})
	}
	if err := os.Rename(tmp, latest); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("point %s at %s: %w", latest, target, err)
	}
	return nil
}

// storeTime reads the start time out of a store run directory's name
// (TimeLayout, perhaps with a "-N" suffix).
func storeTime(name string) (time.Time, bool) {
	if i := strings.LastIndexByte(name, '-'); i > 0 && strings.Trim(name[i+1:], "0123456789") == "" {
		name = name[:i]
	}
	t, err := time.Parse(TimeLayout, name)
	return t, err == nil
}
