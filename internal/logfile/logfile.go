// Package logfile opens relay's own log files (the hub's, each wrapper's)
// so that they cannot grow without bound across runs.
package logfile

import (
	"fmt"
	"os"
)

// MaxSize is the size past which a log file is rotated when it is opened.
const MaxSize = 10 << 20

// Open opens path for appending (creating it with mode 0600). A file that
// has grown past max bytes (MaxSize when max <= 0) is first renamed to
// path + ".1", replacing the one before, so that a log keeps at most two
// files: this run's, and the end of the previous ones.
func Open(path string, max int64) (*os.File, error) {
	if max <= 0 {
		max = MaxSize
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() > max {
		if err := os.Rename(path, path+".1"); err != nil {
			return nil, fmt.Errorf("rotate log %s: %w", path, err)
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", path, err)
	}
	return f, nil
}
