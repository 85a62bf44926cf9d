package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// OutDirError is a run directory that cannot be written where it was asked
// for: the path names a file, a directory locklab did not write, or a place
// where no directory can be created. It is the user's choice that is wrong,
// not the harness.
type OutDirError struct {
	// Dir is the run directory as given.
	Dir string
	// Reason says why it cannot be written.
	Reason string
}

func (e *OutDirError) Error() string {
	return fmt.Sprintf("cannot write the run directory %s: %s", e.Dir, e.Reason)
}

// resultsFormat marks a results.json, and so a run directory, written by locklab.
const resultsFormat = "locklab-results"

// CheckOutDir reports whether WriteDir may write the run directory dir, before
// anything is run: dir must not exist, be empty, or be a run directory that
// locklab wrote and that holds nothing else (it is then replaced whole). It
// creates dir's parent directories. Its errors are *OutDirError.
func CheckOutDir(dir string) error {
	_, err := outDir(dir)
	return err
}

// outDir checks dir as CheckOutDir does and returns its clean path.
func outDir(dir string) (string, error) {
	fail := func(format string, args ...any) (string, error) {
		return "", &OutDirError{Dir: dir, Reason: fmt.Sprintf(format, args...)}
	}
	if dir == "" {
		return fail("no directory named")
	}
	clean := filepath.Clean(dir)
	abs, err := filepath.Abs(clean)
	if err != nil {
		return fail("%v", err)
	}
	if wd, err := os.Getwd(); err == nil && (abs == wd || strings.HasPrefix(wd, abs+string(filepath.Separator)) || abs == filepath.Dir(abs)) {
		return fail("it is the current directory or holds it; name a directory of its own")
	}
	if err := os.MkdirAll(filepath.Dir(clean), 0o755); err != nil {
		return fail("%v", plainPathError(err))
	}
	st, err := os.Lstat(clean)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return clean, nil
	case err != nil:
		return fail("%v", plainPathError(err))
	case st.Mode()&fs.ModeSymlink != 0:
		return fail("it is a symbolic link; name the directory itself")
	case !st.IsDir():
		return fail("it is a file, not a directory")
	}
	entries, err := os.ReadDir(clean)
	if err != nil {
		return fail("%v", plainPathError(err))
	}
	if len(entries) == 0 {
		return clean, nil
	}
	known, ok := runDirFiles(clean)
	if !ok {
		return fail("it is not empty and not a locklab run directory (it holds %s); locklab replaces only run directories it wrote",
			listNames(entries, nil))
	}
	if foreign := listNames(entries, known); foreign != "" {
		return fail("it is a locklab run directory but also holds %s, which locklab did not write; move them or choose another directory", foreign)
	}
	return clean, nil
}

// ServersDir is the directory of a live run directory that holds the real
// servers' data directories and logs (moved in after the run is written).
const ServersDir = "servers"

// runDirFiles returns the files of a run directory as its results.json lists
// them (with results.json and the report's screenshot), and whether dir is a
// run directory at all.
func runDirFiles(dir string) (map[string]bool, bool) {
	b, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	if err != nil {
		return nil, false
	}
	var res struct {
		Format string            `json:"format"`
		Files  map[string]string `json:"files"`
	}
	if json.Unmarshal(b, &res) != nil || res.Format != resultsFormat {
		return nil, false
	}
	known := map[string]bool{ResultsFile: true, ScreenshotFile: true, ServersDir + "/": true}
	for _, name := range res.Files {
		known[name] = true
	}
	return known, true
}

// listNames lists the entries not in known (all of them for nil), a few by
// name.
func listNames(entries []fs.DirEntry, known map[string]bool) string {
	var names []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			name += "/"
		}
		if !known[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	const shown = 3
	if len(names) > shown {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
	}
	return strings.Join(names, ", ")
}

// plainPathError says what went wrong with a path without Go's operation
// name: "a: not a directory" for "mkdir a: not a directory".
func plainPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// swapDir replaces the directory final with the complete directory fresh:
// the old one is renamed away, fresh renamed in, and the old one removed, so
// nothing of the old directory survives beside the new one and a failure
// leaves one of the two whole.
func swapDir(fresh, final string) error {
	_, err := os.Lstat(final)
	if errors.Is(err, fs.ErrNotExist) {
		return os.Rename(fresh, final)
	}
	parent, base := filepath.Split(final)
	old, err := os.MkdirTemp(parent, "."+base+".old-")
	if err != nil {
		return err
	}
	if err := os.Remove(old); err != nil {
		return err
	}
	if err := os.Rename(final, old); err != nil {
		return err
	}
	if err := os.Rename(fresh, final); err != nil {
		if back := os.Rename(old, final); back != nil {
			return fmt.Errorf("%w (and the previous run directory is left at %s: %v)", err, old, back)
		}
		return err
	}
	return os.RemoveAll(old)
}
