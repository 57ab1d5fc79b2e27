package memory

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// embedBatch is how many memories one embedder request carries.
const embedBatch = 32

// startEmbedding begins the background work of a Store with an embedder:
// it re-queues every memory when the model changed since the vectors were
// made, then embeds what is pending, now and after each save, retrying
// with backoff while the embedder is down.
func (s *Store) startEmbedding() error {
	ctx := context.Background()
	if err := s.checkModel(ctx); err != nil {
		return err
	}
	if s.opts.NoBackground {
		return nil
	}
	wctx, cancel := context.WithCancel(ctx)
	s.stopEmbed = cancel
	s.embedDone = make(chan struct{})
	go s.embedLoop(wctx)
	return nil
}

// checkModel queues every memory for embedding when the vectors were made
// by another model than the embedder's (or by none).
func (s *Store) checkModel(ctx context.Context) error {
	model := s.opts.Embedder.Model()
	var have string
	err := s.db.QueryRowContext(ctx, `SELECT model FROM vectors_model`).Scan(&have)
	if err == nil && have == model {
		return nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return s.update(ctx, func(tx *sql.Tx) error {
		return execAll(ctx, tx,
			`INSERT OR IGNORE INTO vectors_pending SELECT id FROM memories`,
			`INSERT OR REPLACE INTO vectors_model(one, model) VALUES (1, '`+strings.ReplaceAll(model, "'", "''")+`')`)
	})
}

// wakeEmbedder tells the background loop that a memory may wait.
func (s *Store) wakeEmbedder() { s.wake.Notify() }

func (s *Store) embedLoop(ctx context.Context) {
	defer close(s.embedDone)
	backoff := s.opts.EmbedRetry
	for {
		n, err := s.embedPending(ctx, embedBatch)
		var wait time.Duration
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.opts.Logger.Warn("memory: embedding failed; retrying", "in", backoff, "err", err)
			wait, backoff = backoff, min(2*backoff, s.opts.EmbedRetryMax)
		case n > 0:
			backoff = s.opts.EmbedRetry
			continue
		default:
			// Memories saved by another process (the CLI's direct use of
			// the file) are found on the next poll.
			backoff, wait = s.opts.EmbedRetry, s.opts.EmbedPoll
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-s.wake:
			t.Stop()
			if err != nil {
				// Down: a save does not cut the backoff short.
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}
	}
}

// embedPending embeds up to n pending memories and returns how many it
// stored. (In no order: sorting would read the whole queue each time.)
func (s *Store) embedPending(ctx context.Context, n int) (int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT p.id, m.text FROM vectors_pending p
		JOIN memories m ON m.id = p.id LIMIT ?`, n)
	if err != nil {
		return 0, err
	}
	var ids, texts []string
	for rows.Next() {
		var id, text string
		if err := rows.Scan(&id, &text); err != nil {
			rows.Close()
			return 0, err
		}
		ids, texts = append(ids, id), append(texts, text)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		// Pending ids whose memory is gone (none should be: the delete
		// trigger removes them) would stop nothing.
		return 0, nil
	}
	vs, err := s.opts.Embedder.Embed(ctx, texts)
	if err != nil {
		return 0, err
	}
	model := s.opts.Embedder.Model()
	err = s.update(ctx, func(tx *sql.Tx) error {
		for i, id := range ids {
			v := unit(vs[i])
			// Delete, then insert: REPLACE would not fire the count's
			// delete trigger.
			if _, err := tx.ExecContext(ctx, `DELETE FROM vectors WHERE id = ?`, id); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO vectors(id, model, dims, bits)
				SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?)`,
				id, model, len(v), encodeBits(signBits(v)), id)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				vseq, err := res.LastInsertId()
				if err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO vectors_data(vseq, vec) VALUES (?, ?)`, vseq, encodeVec(v)); err != nil {
					return err
				}
				if err := insertQ8(ctx, tx, vseq, v); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM vectors_pending WHERE id = ?`, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store vectors: %w", err)
	}
	return len(ids), nil
}

// Pending returns how many memories wait to be embedded.
func (s *Store) Pending(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM vectors_pending`).Scan(&n)
	return n, err
}

// Reindex embeds every memory again with the store's embedder, calling
// progress (when not nil) after each batch with how many are done out of
// how many. It stops at the first embedder error; what was done is kept,
// and what is left stays queued for the background loop.
func (s *Store) Reindex(ctx context.Context, progress func(done, total int)) error {
	if s.opts.Embedder == nil {
		return fmt.Errorf("%w: no embedder is configured ([memory.embedder] in the config)", ErrInvalid)
	}
	err := s.update(ctx, func(tx *sql.Tx) error {
		return execAll(ctx, tx, `INSERT OR IGNORE INTO vectors_pending SELECT id FROM memories`)
	})
	if err != nil {
		return fmt.Errorf("reindex %s: %w", s.path, err)
	}
	total, err := s.Pending(ctx)
	if err != nil {
		return fmt.Errorf("reindex %s: %w", s.path, err)
	}
	for {
		n, err := s.embedPending(ctx, 4*embedBatch)
		if err != nil {
			return fmt.Errorf("reindex %s: %w", s.path, err)
		}
		left, err := s.Pending(ctx)
		if err != nil {
			return fmt.Errorf("reindex %s: %w", s.path, err)
		}
		if progress != nil {
			progress(max(0, total-left), total)
		}
		if n == 0 || left == 0 {
			return nil
		}
	}
}

// unit returns v scaled to length 1 (v itself when it is all zeros), so
// that cosine similarity is a dot product.
func unit(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(sum))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// dotBlob is the dot product of q and the vector encoded in b; 0 when
// their lengths differ.
func dotBlob(q []float32, b []byte) float32 {
	if len(b) != 4*len(q) {
		return 0
	}
	var sum float32
	for i, x := range q {
		sum += x * math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return sum
}

// signBits is the coarse code of v: one bit per dimension, set where the
// value is positive. The coarse pass compares a query's values with it
// (signQuery).
func signBits(v []float32) []uint64 {
	out := make([]uint64, (len(v)+63)/64)
	for i, x := range v {
		if x > 0 {
			out[i/64] |= 1 << (i % 64)
		}
	}
	return out
}

func encodeBits(w []uint64) []byte {
	b := make([]byte, 8*len(w))
	for i, x := range w {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// EmbedNow embeds every pending memory now, for a short-lived process
// that saved one (the background loop is the hub's). Without an embedder
// it does nothing. On error the memories stay pending.
func (s *Store) EmbedNow(ctx context.Context) error {
	if s.opts.Embedder == nil {
		return nil
	}
	for {
		n, err := s.embedPending(ctx, 4*embedBatch)
		if err != nil || n == 0 {
			return err
		}
	}
}

// quantize is the int8 copy of v that the in-memory index ranks with:
// each value becomes round(v/scale), scale = max|v|/127, and errb is the
// length of what that loses (the residual v − scale·q), rounded up: for a
// unit query q, |q·v − scale·(q·c)| ≤ errb.
func quantize(v []float32) (q []int8, scale, errb float32) {
	var peak float32
	for _, x := range v {
		peak = max(peak, abs32(x))
	}
	scale = peak / 127
	q = make([]int8, len(v))
	var res float64
	for i, x := range v {
		var c int8
		if scale > 0 {
			c = int8(max(-127, min(127, math.Round(float64(x/scale)))))
		}
		q[i] = c
		d := float64(x) - float64(scale)*float64(c)
		res += d * d
	}
	return q, scale, float32(math.Sqrt(res) * (1 + 1e-6))
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// insertQ8 writes the int8 copy of the vector v stored as vseq.
func insertQ8(ctx context.Context, tx *sql.Tx, vseq int64, v []float32) error {
	q, scale, errb := quantize(v)
	b := make([]byte, len(q))
	for i, c := range q {
		b[i] = byte(c)
	}
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO vectors_q8(vseq, scale, errb, q8) VALUES (?, ?, ?, ?)`,
		vseq, float64(scale), float64(errb), b)
	return err
}

// fillQ8 writes the int8 copies of the vectors that have none (those
// written before schema 5), a batch at a time.
func fillQ8(ctx context.Context, tx *sql.Tx) error {
	const batch = 1024
	type row struct {
		vseq int64
		vec  []float32
	}
	var last int64
	for {
		rows, err := tx.QueryContext(ctx, `SELECT d.vseq, d.vec FROM vectors_data d
			WHERE d.vseq > ? AND NOT EXISTS (SELECT 1 FROM vectors_q8 q WHERE q.vseq = d.vseq)
			ORDER BY d.vseq LIMIT ?`, last, batch)
		if err != nil {
			return err
		}
		var todo []row
		for rows.Next() {
			var r row
			var b []byte
			if err := rows.Scan(&r.vseq, &b); err != nil {
				rows.Close()
				return err
			}
			r.vec = decodeVec(b)
			todo = append(todo, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range todo {
			if err := insertQ8(ctx, tx, r.vseq, r.vec); err != nil {
				return err
			}
			last = r.vseq
		}
		if len(todo) < batch {
			return nil
		}
	}
}

func decodeVec(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
