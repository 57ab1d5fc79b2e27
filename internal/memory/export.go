package memory

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxImportLine is the longest JSON line Import reads.
const maxImportLine = 1 << 20

// Export implements API: one JSON object a line (the Memory fields), oldest
// first.
func (s *Store) Export(ctx context.Context, w io.Writer) error {
	rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories m ORDER BY m.seq`)
	if err != nil {
		return fmt.Errorf("export memories from %s: %w", s.path, err)
	}
	defer rows.Close()
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return fmt.Errorf("export memories from %s: %w", s.path, err)
		}
		if err := enc.Encode(m); err != nil {
			return fmt.Errorf("export memories: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("export memories from %s: %w", s.path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export memories: %w", err)
	}
	return nil
}

// ReadJSONLines decodes memories written by Export. A line that is not a
// memory is an error naming its line number; blank lines are skipped.
func ReadJSONLines(r io.Reader) ([]Memory, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxImportLine)
	var out []Memory
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var m Memory
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if strings.TrimSpace(m.Text) == "" {
			return nil, fmt.Errorf("line %d: %w: no text", line, ErrInvalid)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("after %d memories: %w", len(out), err)
	}
	return out, nil
}

// Import implements API. It adds all or nothing: a bad line fails the
// whole import with its line number.
func (s *Store) Import(ctx context.Context, r io.Reader) (added, skipped int, err error) {
	ms, err := ReadJSONLines(r)
	if err != nil {
		return 0, 0, fmt.Errorf("import memories: %w", err)
	}
	return s.ImportMemories(ctx, ms)
}

// ImportMemories adds ms, keeping their ids and times, in one transaction.
// A memory whose id, or whose text in the same scope, is already stored is
// skipped. Memories without an id get a new one; without times, now.
func (s *Store) ImportMemories(ctx context.Context, ms []Memory) (added, skipped int, err error) {
	now := s.opts.Now().UTC().Truncate(1e6)
	err = s.update(ctx, func(tx *sql.Tx) error {
		added, skipped = 0, 0
		for i, m := range ms {
			id := m.ID
			created, updated := m.Created, m.Updated
			m, err := s.normalize(m)
			if err != nil {
				return fmt.Errorf("memory %d (%q): %w", i+1, id, err)
			}
			if id == "" {
				if m.ID, err = newID(ctx, tx); err != nil {
					return err
				}
			} else if m.ID, err = NormalizeID(id); err != nil {
				return fmt.Errorf("memory %d: %w: bad id %q", i+1, ErrInvalid, id)
			}
			m.Created, m.Updated = created, updated
			if m.Created.IsZero() {
				m.Created = now
			}
			if m.Updated.Before(m.Created) {
				m.Updated = m.Created
			}
			var one int
			err = tx.QueryRowContext(ctx, `SELECT 1 FROM memories WHERE id = ? OR (scope_key = ? AND text_key = ?)`,
				m.ID, scopeKey(m), textKey(m.Text)).Scan(&one)
			if err == nil {
				skipped++
				continue
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if err := insert(ctx, tx, m); err != nil {
				return err
			}
			added++
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("import memories into %s: %w", s.path, err)
	}
	if added > 0 {
		s.wakeEmbedder()
	}
	return added, skipped, nil
}

// page returns up to n memories with seq above after, in seq order, and the
// cursor for the next page (0 when there is none).
func (s *Store) page(ctx context.Context, after int64, n int) ([]Memory, int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+`, m.seq FROM memories m
		WHERE m.seq > ? ORDER BY m.seq LIMIT ?`, after, n)
	if err != nil {
		return nil, 0, fmt.Errorf("export memories from %s: %w", s.path, err)
	}
	defer rows.Close()
	var out []Memory
	var last int64
	for rows.Next() {
		m, err := scanMemory(rows, &last)
		if err != nil {
			return nil, 0, fmt.Errorf("export memories from %s: %w", s.path, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("export memories from %s: %w", s.path, err)
	}
	if len(out) < n {
		last = 0
	}
	return out, last, nil
}
