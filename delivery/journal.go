package delivery

import (
	"bufio"
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
type Journal struct {
	mu   sync.Mutex
	path string
	f    *os.File
	seen map[string]bool
	n    int // lines in the file
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
	return j, nil
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

// Mark records ids as typed, on disk, before returning.
func (j *Journal) Mark(ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.WriteString(strings.Join(ids, "\n") + "\n"); err != nil {
		return fmt.Errorf("write delivery journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("sync delivery journal %s: %w", j.path, err)
	}
	for _, id := range ids {
		j.seen[id] = true
	}
	j.n += len(ids)
	return nil
}

// Close closes the journal's file.
func (j *Journal) Close() error { return j.f.Close() }
