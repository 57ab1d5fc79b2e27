package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// qdrantBatch is how many memories one upsert carries.
const qdrantBatch = 64

// syncLoop sends what is pending to Qdrant: now, after each change, and
// every EmbedPoll (for memories saved by other processes into the same
// file); while Qdrant or the embedder fails it retries after EmbedRetry,
// doubling up to EmbedRetryMax, as the Store's embedding does.
func (s *QdrantStore) syncLoop(ctx context.Context) {
	defer close(s.loopDone)
	backoff := s.opts.EmbedRetry
	for {
		n, err := s.syncSome(ctx, qdrantBatch)
		var wait time.Duration
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.opts.Logger.Warn("memory: sending memories to qdrant failed; retrying", "in", backoff, "err", err)
			wait, backoff = backoff, min(2*backoff, s.opts.EmbedRetryMax)
		case n > 0:
			backoff = s.opts.EmbedRetry
			continue
		default:
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
				select { // down: a save does not cut the backoff short
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}
	}
}

// Sync sends every pending change to Qdrant now and returns when none is
// left, or with the first error (what was sent stays sent). For a
// short-lived process and for tests; the hub's loop does it on its own.
func (s *QdrantStore) Sync(ctx context.Context) error {
	for {
		n, err := s.syncSome(ctx, 4*qdrantBatch)
		if err != nil || n == 0 {
			return err
		}
	}
}

// Pending returns how many memories wait to be sent to Qdrant (new,
// changed, or made by another model) and how many points wait to be
// deleted.
func (s *QdrantStore) Pending(ctx context.Context) (upserts, deletes int, err error) {
	err = s.local.db.QueryRowContext(ctx, `SELECT count(*) FROM memories m
		LEFT JOIN qdrant_points p ON p.collection = ? AND p.id = m.id
		WHERE p.id IS NULL OR p.updated_ms <> m.updated_ms OR p.model <> ?`, s.key, s.em.Model()).Scan(&upserts)
	if err == nil {
		err = s.local.db.QueryRowContext(ctx, `SELECT count(*) FROM qdrant_points
			WHERE collection = ? AND id NOT IN (SELECT id FROM memories)`, s.key).Scan(&deletes)
	}
	return upserts, deletes, err
}

// Reindex embeds and sends every memory again, calling progress (when
// not nil) after each batch.
func (s *QdrantStore) Reindex(ctx context.Context, progress func(done, total int)) error {
	fail := func(err error) error {
		return fmt.Errorf("reindex into qdrant collection %s: %w", s.q.c.Collection, err)
	}
	if _, err := s.local.db.ExecContext(ctx, `DELETE FROM qdrant_points WHERE collection = ?`, s.key); err != nil {
		return fail(err)
	}
	s.mu.Lock()
	s.rescan()
	s.mu.Unlock()
	total, _, err := s.Pending(ctx)
	if err != nil {
		return fail(err)
	}
	done := 0
	for {
		n, err := s.syncSome(ctx, 4*qdrantBatch)
		if err != nil {
			return fail(err)
		}
		if n == 0 {
			if progress != nil && total == 0 {
				progress(0, 0)
			}
			return nil
		}
		done = min(total, done+n)
		if progress != nil {
			progress(done, total)
		}
	}
}

// syncSome sends up to n pending memories and deletes up to n forgotten
// ones' points; it returns how many it did.
func (s *QdrantStore) syncSome(ctx context.Context, n int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.prepare(ctx); err != nil {
		return 0, err
	}
	var dels int64
	if err := s.local.db.QueryRowContext(ctx, `SELECT n FROM memories_deletes`).Scan(&dels); err != nil {
		return 0, err
	}
	if dels != s.delMark {
		s.seqMark = 0
	}
	up, err := s.upsertSome(ctx, n)
	if err != nil {
		if errors.Is(err, errNoCollection) {
			s.prepared = false // deleted under us: made again next round
		}
		return 0, err
	}
	if dels == s.delMark {
		return up, nil
	}
	del, err := s.deleteSome(ctx, n)
	if err == nil && del < n {
		s.delMark = dels
	}
	return up + del, err
}

// rescan makes the next round look at every memory and point again.
func (s *QdrantStore) rescan() { s.seqMark, s.delMark = 0, -1 }

// prepare looks at the collection once per process (and after it was
// found missing): its vector size, the payload indexes, and which of the
// points the file believes sent are really there (a server that lost its
// data, or a collection deleted and made anew, gets them sent again).
func (s *QdrantStore) prepare(ctx context.Context) error {
	if s.prepared {
		return nil
	}
	c, err := s.q.collection(ctx)
	switch {
	case errors.Is(err, errNoCollection):
		// Made with the first vectors, when their size is known.
		if _, err := s.local.db.ExecContext(ctx, `DELETE FROM qdrant_points WHERE collection = ?`, s.key); err != nil {
			return err
		}
		s.dims, s.prepared = 0, true
		s.rescan()
		return nil
	case err != nil:
		return err
	}
	size, _, ok := c.vectorParams()
	if !ok {
		return fmt.Errorf("%w: qdrant collection %s at %s has named vectors only; relay needs one unnamed vector: name another collection in [memory.qdrant] collection",
			ErrQdrant, s.q.c.Collection, s.q.c.URL)
	}
	if err := s.indexes(ctx); err != nil {
		return err
	}
	if err := s.reconcile(ctx); err != nil {
		return err
	}
	s.dims, s.prepared = size, true
	s.rescan()
	return nil
}

func (s *QdrantStore) indexes(ctx context.Context) error {
	for _, ix := range qdrantIndexes {
		if err := s.q.createIndex(ctx, ix[0], ix[1]); err != nil {
			return err
		}
	}
	return nil
}

// reconcile forgets, in the file, the sends whose point is not in the
// collection with the same updated time and model: they are sent again.
func (s *QdrantStore) reconcile(ctx context.Context) error {
	type state struct {
		updated int64
		model   string
	}
	there := map[string]state{}
	var offset json.RawMessage
	for {
		pts, next, err := s.q.scroll(ctx, offset, 1000)
		if err != nil {
			return err
		}
		for _, p := range pts {
			there[p.Payload.ID] = state{p.Payload.UpdatedMS, p.Payload.Model}
		}
		if next == nil {
			break
		}
		offset = next
	}
	rows, err := s.local.db.QueryContext(ctx, `SELECT id, updated_ms, model FROM qdrant_points WHERE collection = ?`, s.key)
	if err != nil {
		return err
	}
	var stale []string
	for rows.Next() {
		var id string
		var st state
		if err := rows.Scan(&id, &st.updated, &st.model); err != nil {
			rows.Close()
			return err
		}
		if there[id] != st {
			stale = append(stale, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for len(stale) > 0 {
		k := min(len(stale), 500)
		args := []any{s.key}
		for _, id := range stale[:k] {
			args = append(args, id)
		}
		if _, err := s.local.db.ExecContext(ctx, `DELETE FROM qdrant_points WHERE collection = ? AND id IN (`+
			strings.Repeat("?,", k-1)+`?)`, args...); err != nil {
			return err
		}
		stale = stale[k:]
	}
	return nil
}

// upsertSome embeds and sends up to n memories that are new, changed or
// of another model, creating the collection with the first vectors.
func (s *QdrantStore) upsertSome(ctx context.Context, n int) (int, error) {
	model := s.em.Model()
	var top int64
	if err := s.local.db.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM memories`).Scan(&top); err != nil {
		return 0, err
	}
	rows, err := s.local.db.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories m
		LEFT JOIN qdrant_points p ON p.collection = ? AND p.id = m.id
		WHERE m.seq > ? AND (p.id IS NULL OR p.updated_ms <> m.updated_ms OR p.model <> ?)
		ORDER BY m.seq LIMIT ?`, s.key, s.seqMark, model, n)
	if err != nil {
		return 0, err
	}
	var ms []Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			rows.Close()
			return 0, err
		}
		ms = append(ms, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(ms) == 0 {
		s.seqMark = top
		return 0, nil
	}
	var vs [][]float32
	for i := 0; i < len(ms); i += embedBatch {
		texts := make([]string, 0, embedBatch)
		for _, m := range ms[i:min(len(ms), i+embedBatch)] {
			texts = append(texts, m.Text)
		}
		v, err := s.em.Embed(ctx, texts)
		if err != nil {
			return 0, err
		}
		vs = append(vs, v...)
	}
	dims := len(vs[0])
	if s.dims == 0 {
		if err := s.q.createCollection(ctx, dims); err != nil {
			return 0, err
		}
		if err := s.indexes(ctx); err != nil {
			return 0, err
		}
		s.dims = dims
	}
	if s.dims != dims {
		return 0, fmt.Errorf("%w: qdrant collection %s at %s holds vectors of %d dimensions; the embedder (%s) gives %d: name another collection in [memory.qdrant] collection, or delete this one",
			ErrQdrant, s.q.c.Collection, s.q.c.URL, s.dims, model, dims)
	}
	ps := make([]qPoint, len(ms))
	for i, m := range ms {
		id, err := pointID(m.ID)
		if err != nil {
			return 0, err
		}
		ps[i] = qPoint{ID: id, Vector: unit(vs[i]), Payload: payloadOf(m, model)}
	}
	if err := s.q.upsert(ctx, ps); err != nil {
		return 0, err
	}
	err = s.local.update(ctx, func(tx *sql.Tx) error {
		for _, m := range ms {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO qdrant_points (collection, id, updated_ms, model)
				VALUES (?, ?, ?, ?)`, s.key, m.ID, m.Updated.UnixMilli(), model); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && len(ms) < n {
		s.seqMark = top // every memory up to top is sent now
	}
	return len(ms), err
}

// deleteSome deletes up to n points of memories the file no longer has.
func (s *QdrantStore) deleteSome(ctx context.Context, n int) (int, error) {
	rows, err := s.local.db.QueryContext(ctx, `SELECT id FROM qdrant_points
		WHERE collection = ? AND id NOT IN (SELECT id FROM memories) LIMIT ?`, s.key, n)
	if err != nil {
		return 0, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return 0, err
	}
	pids := make([]uint64, 0, len(ids))
	args := []any{s.key}
	for _, id := range ids {
		if p, err := pointID(id); err == nil {
			pids = append(pids, p)
		}
		args = append(args, id)
	}
	if s.dims > 0 {
		if err := s.q.deletePoints(ctx, pids); err != nil && !errors.Is(err, errNoCollection) {
			return 0, err
		}
	}
	_, err = s.local.db.ExecContext(ctx, `DELETE FROM qdrant_points WHERE collection = ? AND id IN (`+
		strings.Repeat("?,", len(ids)-1)+`?)`, args...)
	return len(ids), err
}

// QdrantReport is what CheckQdrant found.
type QdrantReport struct {
	Version string // the server's
	// Exists says whether the collection exists; Dimensions and Points
	// are its vector size and point count when it does.
	Exists     bool
	Dimensions int
	Points     int64
}

// CheckQdrant asks the server of c whether it answers and, when the
// collection exists, whether its vectors have dims dimensions (dims 0:
// not checked). Errors name the URL and say what to do.
func CheckQdrant(ctx context.Context, c QdrantConfig, dims int) (QdrantReport, error) {
	var r QdrantReport
	q, err := newQdrantClient(c)
	if err != nil {
		return r, err
	}
	if r.Version, err = q.version(ctx); err != nil {
		return r, err
	}
	info, err := q.collection(ctx)
	if errors.Is(err, errNoCollection) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	r.Exists, r.Points = true, info.PointsCount
	size, dist, ok := info.vectorParams()
	if !ok {
		return r, fmt.Errorf("%w: qdrant collection %s at %s has named vectors only; relay needs one unnamed vector", ErrQdrant, c.Collection, q.c.URL)
	}
	r.Dimensions = size
	if dims > 0 && size != dims {
		return r, fmt.Errorf("%w: qdrant collection %s at %s holds vectors of %d dimensions; the embedder gives %d", ErrQdrant, c.Collection, q.c.URL, size, dims)
	}
	if dist != "" && dist != "Cosine" {
		return r, fmt.Errorf("%w: qdrant collection %s at %s compares vectors by %s; relay makes its collections with Cosine", ErrQdrant, c.Collection, q.c.URL, dist)
	}
	return r, nil
}
