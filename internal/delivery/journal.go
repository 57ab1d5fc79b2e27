package delivery

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/relayhq/relay/internal/mailbox"
)

// journalKeep is how many typed ids a journal remembers: far more than can
// be redelivered after a crash.
const journalKeep = 10000

// A Journal remembers the ids of messages typed into an agent, in a file,
// so that a message redelivered after a crash is not typed twice.
//
// Mark records the ids before it returns (a killed process loses nothing
// it marked). The mark is made right after the text reached the agent, so
// it must not wait for the disk: a write to a journal on a busy disk can
// wait tens of milliseconds behind the filesystem's own journal commit,
// and a wrapper killed meanwhile has its messages typed again. So Mark
// writes to a side file in memory (tmpfs: /dev/shm, which outlives the
// process but never waits for a disk), and the ids reach the journal's own
// file in the background, synced many marks at once (group commit); the
// side file is emptied once they are there, and read back by the next
// OpenJournal after a kill. Where no private side file can be had, Mark
// writes the journal's file itself, as before. A machine that loses power
// may forget the last marks, and their messages are typed again (at least
// once, never lost).
type Journal struct {
	mu   sync.Mutex
	path string
	f    *os.File
	side *os.File // nil: Mark writes f itself
	// marks holds each Mark's ids for the syncer (nil for a mark written
	// to f directly: it only asks for a sync).
	marks   *mailbox.Mailbox[[]string]
	retry   []string // ids whose write failed, the syncer's until done is closed
	seen    map[string]bool
	n       int   // lines in the file
	syncErr error // the last background write's or sync's failure, said by the next Mark

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
	if err := j.openSide(); err != nil {
		j.f.Close()
		return nil, err
	}
	j.marks, j.stop, j.done = mailbox.New[[]string](), make(chan struct{}), make(chan struct{})
	go j.syncer()
	return j, nil
}

// syncer writes the ids marked on the side file to the journal's file and
// syncs it, one write and sync for all the marks made while the one before
// ran, until Close; the side file is emptied when nothing waits.
func (j *Journal) syncer() {
	defer close(j.done)
	for {
		select {
		case <-j.stop:
			return
		case <-j.marks.Ready():
		}
		ids := j.retry
		for _, m := range j.marks.TakeAll() {
			ids = append(ids, m...)
		}
		j.retry = nil
		err := j.flush(ids)
		j.mu.Lock()
		if err != nil {
			j.syncErr = err
			j.retry = ids // kept on the side file, tried again
		} else if j.side != nil && j.marks.Len() == 0 {
			// Everything on the side file is in the journal's file (Mark
			// writes it and queues its ids under j.mu).
			if err := j.side.Truncate(0); err != nil {
				j.syncErr = fmt.Errorf("empty delivery journal's side file: %w", err)
			}
		}
		j.mu.Unlock()
	}
}

// flush appends ids to the journal's file and syncs it. Nothing to add
// costs nothing: every earlier write was synced by the flush that made it
// (or is kept in retry), so a session that typed nothing opens and closes
// its journal without waiting for the disk (issue 34: start-up).
func (j *Journal) flush(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := j.f.WriteString(strings.Join(ids, "\n") + "\n"); err != nil {
		return fmt.Errorf("write delivery journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("sync delivery journal %s: %w", j.path, err)
	}
	return nil
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

// Mark records ids as typed: on the side file (or in the journal's file,
// without one) before returning. An error says the write failed, or that a
// background write or sync before it did.
func (j *Journal) Mark(ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, id := range ids {
		j.seen[id] = true // typed, whatever the disk says
	}
	w := j.f
	if j.side != nil {
		w = j.side
	}
	if _, err := w.WriteString(strings.Join(ids, "\n") + "\n"); err != nil {
		return fmt.Errorf("write delivery journal %s: %w", j.path, err)
	}
	var side []string // nil: written to f, only a sync is due
	if j.side != nil {
		side = ids
	}
	j.n += len(ids)
	j.marks.Put(side) // the syncer takes every mark queued by then in one sync
	err := j.syncErr
	j.syncErr = nil
	return err
}

// Close writes what waits on the side file to the journal's file, syncs
// and closes it, and removes the side file.
func (j *Journal) Close() error {
	err := os.ErrClosed
	j.close.Do(func() {
		close(j.stop)
		<-j.done
		j.mu.Lock()
		defer j.mu.Unlock()
		ids := j.retry
		for _, m := range j.marks.TakeAll() {
			ids = append(ids, m...)
		}
		err = j.flush(ids)
		if err == nil {
			j.retry = nil
		}
		if j.side != nil {
			if err == nil {
				err = os.Remove(j.side.Name())
			}
			err = errors.Join(err, j.side.Close())
		}
		err = errors.Join(err, j.f.Close())
	})
	return err
}
