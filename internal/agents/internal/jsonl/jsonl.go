package jsonl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ReadNewLines calls line for each complete line written to path since
// *off, and moves *off past it: the way each session-file reader follows a
// file that its CLI appends to. An unterminated last line (a record being
// written) is left for the next call; a missing file has no lines. what
// names the file in errors ("Codex rollout"). An error from line is
// collected with the line's byte offset, and reading goes on.
func ReadNewLines(path, what string, off *int64, line func([]byte) error) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	defer f.Close()
	if _, err := f.Seek(*off, io.SeekStart); err != nil {
		return fmt.Errorf("read %s %s: %w", what, path, err)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var errs []error
	for {
		b, err := br.ReadBytes('\n')
		if err != nil {
			if !errors.Is(err, io.EOF) {
				errs = append(errs, fmt.Errorf("read %s %s: %w", what, path, err))
			}
			break // an unterminated line is read again next time
		}
		at := *off
		*off += int64(len(b))
		if err := line(b); err != nil {
			errs = append(errs, fmt.Errorf("read %s %s: line at byte %d: %w", what, path, at, err))
		}
	}
	return errors.Join(errs...)
}
