package delivery

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// journalKeep is how many typed ids a journal remembers: far more than can
// be redelivered after a crash.
const journalKeep = 10000

// A Journal remembers the ids of messages typed into an agent, in a file,
// so that a message redelivered after a crash is not typed twice.
//
// Mark writes the ids to the file before it returns (a killed process
// loses nothing it marked); the file is synced to disk in the background,
// many marks at once (group commit), so that typing never waits for the
// disk: a machine that loses power may forget the last marks, and their
// messages are typed again (at least once, never lost).
type Journal struct {
	mu      sync.Mutex
	path    string
	f       *os.File
	seen    map[string]bool
	n       int   // lines in the file
	syncErr error // the last background sync's failure, said by the next Mark

	dirty chan struct{} // a mark waits to be synced
	stop  chan struct{} // closed by Close
	done  chan struct{} // closed when the syncer returned
	close sync.Once
}

// OpenJournal opens (or creates, mode 0600) the journal at path.
func OpenJournal(path string) (*Journal, error) {
	j := &Journal{path: path, seen: map[string]bool{}}
	ids, err := readIDs(path)
	if err != nil {
		return nil, err
	}
	if len(ids) > journalKeep {
		ids = ids[len(ids)-journalKeep:]
		if err := writeIDs(path, ids); err != nil {
			return nil, err
		}
	}
	for _, id := range ids {
		j.seen[id] = true
	}
	j.n = len(ids)
	j.f, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open delivery journal %s: %w", path, err)
	}
	j.dirty, j.stop, j.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go j.syncer()
	return j, nil
}

// syncer syncs the file after marks, one sync for all the marks written
// while the one before ran, until Close.
func (j *Journal) syncer() {
	defer close(j.done)
	for {
		select {
		case <-j.stop:
			return
		case <-j.dirty:
		}
		if err := j.f.Sync(); err != nil {
			j.mu.Lock()
			j.syncErr = fmt.Errorf("sync delivery journal %s: %w", j.path, err)
			j.mu.Unlock()
		}
	}
}

func readIDs(path string) ([]string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read delivery journal %s: %w", path, err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if id := strings.TrimSpace(sc.Text()); id != "" {
			ids = append(ids, id)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read delivery journal %s: %w", path, err)
	}
	return ids, nil
}

func writeIDs(path string, ids []string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(ids, "\n")+"\n"), 0o600); err != nil {
		return fmt.Errorf("compact delivery journal %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// Seen reports whether id was typed before.
func (j *Journal) Seen(id string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.seen[id]
}

// Mark records ids as typed: in the file (written, not yet synced) before
// returning. An error says the write failed, or that a sync before it did.
func (j *Journal) Mark(ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, id := range ids {
		j.seen[id] = true // typed, whatever the disk says
	}
	if _, err := j.f.WriteString(strings.Join(ids, "\n") + "\n"); err != nil {
		return fmt.Errorf("write delivery journal %s: %w", j.path, err)
	}
	j.n += len(ids)
	select {
	case j.dirty <- struct{}{}:
	default: // a sync is due already; it takes this mark too
	}
	err := j.syncErr
	j.syncErr = nil
	return err
}

// Close syncs and closes the journal's file.
func (j *Journal) Close() error {
	err := os.ErrClosed
	j.close.Do(func() {
		close(j.stop)
		<-j.done
		err = errors.Join(j.f.Sync(), j.f.Close())
	})
	return err
}
