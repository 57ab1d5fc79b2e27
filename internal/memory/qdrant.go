package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/relayhq/relay/internal/mailbox"
)

// QdrantStore keeps memories' vectors in a Qdrant collection. It
// implements API.
//
// The memories themselves stay in the local SQLite file (a Store without
// an embedder): it is the record and the full-text index. Save, List,
// Get, Forget, Export, Import and lexical search are the Store's, so they
// behave exactly as with the sqlite backend and never wait for Qdrant. A
// background loop sends each new or changed memory to Qdrant as a point
// (its vector from the embedder, its fields as payload) and deletes the
// points of forgotten ones; what it has sent is recorded in the file
// (table qdrant_points), so a memory saved while Qdrant or the embedder
// is down is sent when they are back, by this process or the next. Search
// by meaning asks Qdrant; hybrid search fuses that with the file's
// lexical ranking by the same rule as the Store (see searchByMeaning).
type QdrantStore struct {
	local *Store
	q     *qdrantClient
	em    Embedder
	opts  Options
	key   string // url and collection: the rows of qdrant_points that are this collection's

	mu       sync.Mutex // the collection's state below, and one sync at a time
	prepared bool       // the collection was looked at (and reconciled) by this process
	dims     int        // its vector size; 0 while it does not exist
	// seqMark: every memory with seq <= seqMark was found sent (a
	// change gives a memory a new, higher seq; see Save), so the search
	// for pending memories reads only those above it. delMark is the
	// file's count of deletions when the points of forgotten memories
	// were last looked for (-1: never). A deletion resets seqMark, since
	// SQLite may hand a deleted seq out again.
	seqMark, delMark int64

	wake      mailbox.Signal
	stop      context.CancelFunc
	loopDone  chan struct{}
	closeOnce sync.Once
}

var _ API = (*QdrantStore)(nil)

// OpenQdrant opens the memory file at path (as Open does) and uses the
// Qdrant collection of qc for its vectors. opts.Embedder is required.
// Opening does not contact Qdrant: a server down at start is retried by
// the background loop (not run with opts.NoBackground), and errors name
// its URL.
func OpenQdrant(path string, qc QdrantConfig, opts *Options) (*QdrantStore, error) {
	o := opts.withDefaults()
	if o.Embedder == nil {
		return nil, fmt.Errorf("%w: the qdrant backend needs an embedder ([memory.embedder] in the config)", ErrInvalid)
	}
	q, err := newQdrantClient(qc)
	if err != nil {
		return nil, err
	}
	lo := o
	lo.Embedder, lo.NoBackground = nil, true
	local, err := Open(path, &lo)
	if err != nil {
		return nil, err
	}
	s := &QdrantStore{local: local, q: q, em: o.Embedder, opts: o, key: q.c.URL + " " + q.c.Collection, wake: mailbox.NewSignal(), delMark: -1}
	if _, err := local.db.Exec(`CREATE TABLE IF NOT EXISTS qdrant_points (
		collection TEXT NOT NULL, id TEXT NOT NULL, updated_ms INTEGER NOT NULL, model TEXT NOT NULL,
		PRIMARY KEY (collection, id)) WITHOUT ROWID`); err != nil {
		local.Close()
		return nil, fmt.Errorf("open memory store %s: %w", path, err)
	}
	if !o.NoBackground {
		ctx, cancel := context.WithCancel(context.Background())
		s.stop, s.loopDone = cancel, make(chan struct{})
		go s.syncLoop(ctx)
	}
	return s, nil
}

// URL is the Qdrant server's URL, Collection its collection.
func (s *QdrantStore) URL() string        { return s.q.c.URL }
func (s *QdrantStore) Collection() string { return s.q.c.Collection }

// Local is the SQLite store that keeps the memories.
func (s *QdrantStore) Local() *Store { return s.local }

// Close stops the background loop and closes the file.
func (s *QdrantStore) Close() error {
	s.closeOnce.Do(func() {
		if s.stop != nil {
			s.stop()
			<-s.loopDone
		}
	})
	return s.local.Close()
}

func (s *QdrantStore) poke() { s.wake.Notify() }

// Save implements API: the memory is in the file when Save returns, and
// reaches Qdrant in the background.
func (s *QdrantStore) Save(ctx context.Context, m Memory) (Memory, bool, error) {
	m, created, err := s.local.Save(ctx, m)
	if err == nil {
		s.poke()
	}
	return m, created, err
}

// Forget implements API; the point is deleted in the background, and
// search never shows it meanwhile (hits are read through the file).
func (s *QdrantStore) Forget(ctx context.Context, id string) (Memory, error) {
	m, err := s.local.Forget(ctx, id)
	if err == nil {
		s.poke()
	}
	return m, err
}

// Import implements API.
func (s *QdrantStore) Import(ctx context.Context, r io.Reader) (int, int, error) {
	a, k, err := s.local.Import(ctx, r)
	if a > 0 {
		s.poke()
	}
	return a, k, err
}

// ImportMemories adds ms as Store.ImportMemories does; they are sent to
// Qdrant in the background.
func (s *QdrantStore) ImportMemories(ctx context.Context, ms []Memory) (int, int, error) {
	a, k, err := s.local.ImportMemories(ctx, ms)
	if a > 0 {
		s.poke()
	}
	return a, k, err
}

// List implements API (from the file).
func (s *QdrantStore) List(ctx context.Context, f Filter) ([]Memory, error) {
	return s.local.List(ctx, f)
}

// Get implements API (from the file).
func (s *QdrantStore) Get(ctx context.Context, id string) (Memory, error) {
	return s.local.Get(ctx, id)
}

// Export implements API (from the file).
func (s *QdrantStore) Export(ctx context.Context, w io.Writer) error { return s.local.Export(ctx, w) }

// Search implements API. Modes as the Store's with an embedder: hybrid by
// default; lexical is the file's full-text search. When Qdrant or the
// embedder fails, a hybrid search falls back to the lexical ranking
// (logged) and a semantic one fails with the error, which names the URL.
func (s *QdrantStore) Search(ctx context.Context, q Query) ([]Result, error) {
	mode := q.Mode
	switch mode {
	case "":
		mode = ModeHybrid
	case ModeLexical, ModeSemantic, ModeHybrid:
	default:
		return nil, fmt.Errorf("%w: unknown search mode %q (want lexical, semantic or hybrid)", ErrInvalid, mode)
	}
	if mode == ModeLexical || strings.TrimSpace(q.Text) == "" {
		q.Mode = ModeLexical
		return s.local.Search(ctx, q)
	}
	limit := clampLimit(q.Limit, DefaultLimit)
	terms := queryTerms(q.Text)
	depth := max(limit, fuseDepth)
	fail := func(err error) ([]Result, error) {
		return nil, fmt.Errorf("search memories in qdrant collection %s at %s: %w", s.q.c.Collection, s.q.c.URL, err)
	}
	sem, err := s.semantic(ctx, q.Text, q.Filter, depth)
	switch {
	case err != nil && mode == ModeSemantic:
		return fail(err)
	case err != nil:
		s.opts.Logger.Warn("memory: hybrid search without meaning", "err", err)
	}
	var lex []candidate
	if mode == ModeHybrid && len(terms) > 0 {
		if lex, err = s.local.lexical(ctx, terms, q.Filter, depth); err != nil {
			return fail(err)
		}
	}
	hits, scores := fuse(mode, lex, sem, limit)
	res, err := s.local.fetch(ctx, terms, hits, scores)
	if err != nil {
		return fail(err)
	}
	return res, nil
}

// semantic asks Qdrant for the limit points passing f nearest text's
// vector, and keeps those whose memory the file still holds, unchanged
// model, with a cosine above zero (as the Store's semantic search).
func (s *QdrantStore) semantic(ctx context.Context, text string, f Filter, limit int) ([]hit, error) {
	vs, err := s.em.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	pts, err := s.q.query(ctx, unit(vs[0]), qdrantFilter(f), limit)
	if errors.Is(err, errNoCollection) {
		s.mu.Lock()
		s.prepared = false
		s.mu.Unlock()
		return nil, nil // nothing sent yet
	}
	if err != nil {
		return nil, err
	}
	model := s.em.Model()
	ids := make([]any, 0, len(pts))
	for _, p := range pts {
		if p.Score > 0 && p.Payload.Model == model {
			ids = append(ids, p.Payload.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	type row struct{ seq, updated int64 }
	local := map[string]row{}
	rows, err := s.local.db.QueryContext(ctx, `SELECT id, seq, updated_ms FROM memories WHERE id IN (`+
		strings.Repeat("?,", len(ids)-1)+`?)`, ids...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var r row
		if err := rows.Scan(&id, &r.seq, &r.updated); err != nil {
			return nil, err
		}
		local[id] = r
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []hit
	for _, p := range pts {
		if r, ok := local[p.Payload.ID]; ok && p.Score > 0 && p.Payload.Model == model {
			out = append(out, hit{seq: r.seq, updated: r.updated, cos: p.Score})
		}
	}
	slices.SortStableFunc(out, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.cos, a.cos), cmp.Compare(b.seq, a.seq))
	})
	return out, nil
}

// fuse ranks the hits of a semantic or hybrid search by the rule of
// Store.searchByMeaning (docs/memory.md): in hybrid mode memories holding
// every query word first in lexical order, then the rest by reciprocal
// rank fusion, ties to the later saved; in semantic mode by cosine. It
// returns the best limit and every memory's Scores.
func fuse(mode string, lex []candidate, sem []hit, limit int) ([]candidate, map[int64]*Scores) {
	scores := map[int64]*Scores{}
	updated := map[int64]int64{}
	at := func(seq int64) *Scores {
		if sc, ok := scores[seq]; ok {
			return sc
		}
		sc := &Scores{}
		scores[seq] = sc
		return sc
	}
	for i, c := range lex {
		sc := at(c.seq)
		sc.Lexical, sc.LexicalRank, sc.Every = c.score, i+1, c.every
		updated[c.seq] = c.updated
	}
	for i, h := range sem {
		sc := at(h.seq)
		sc.Semantic, sc.SemanticRank = h.cos, i+1
		updated[h.seq] = h.updated
	}
	hits := make([]candidate, 0, len(scores))
	for seq, sc := range scores {
		if mode == ModeHybrid {
			if sc.LexicalRank > 0 {
				sc.Fused += 1 / float64(rrfK+sc.LexicalRank)
			}
			if sc.SemanticRank > 0 {
				sc.Fused += 1 / float64(rrfK+sc.SemanticRank)
			}
		}
		hits = append(hits, candidate{seq: seq, updated: updated[seq], every: sc.Every, score: sc.Fused})
	}
	slices.SortFunc(hits, func(a, b candidate) int {
		sa, sb := scores[a.seq], scores[b.seq]
		if mode == ModeSemantic {
			return cmp.Or(cmp.Compare(sb.Semantic, sa.Semantic), cmp.Compare(b.seq, a.seq))
		}
		if a.every != b.every {
			if a.every {
				return -1
			}
			return 1
		}
		if a.every {
			return cmp.Compare(sa.LexicalRank, sb.LexicalRank)
		}
		return cmp.Or(cmp.Compare(sb.Fused, sa.Fused), cmp.Compare(b.seq, a.seq))
	})
	hits = hits[:min(len(hits), limit)]
	if mode == ModeSemantic {
		for i := range hits {
			hits[i].score = scores[hits[i].seq].Semantic
		}
	}
	return hits, scores
}
