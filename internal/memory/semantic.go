package memory

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// How semantic search reads a store (the index is vecIndex's, in memory):
//
//  1. the filter, applied to every vector's memory;
//  2. of those passing, the semWindow whose sign codes are nearest the
//     query's by Hamming distance (every one when no more pass);
//  3. those ranked by approximate cosine, from their int8 copies, each
//     with a bound of its error;
//  4. the vectors whose upper bound reaches the limit-th best lower bound
//     (the others cannot be among the limit best) read from the file and
//     ranked by exact cosine.
//
// Steps 3 and 4 give exactly the window's ranking by exact cosine; only
// step 2 is approximate, and only when more than semWindow memories pass
// the filter: up to that the search is exact.
const semWindow = 2048

// hit is one memory found by meaning.
type hit struct {
	seq     int64
	updated int64
	cos     float64
}

// cand is a vector of the window: its index position, approximate cosine
// and that approximation's error bound.
type cand struct {
	pos           int32
	approx, bound float64
}

func (c *cand) upper() float64 { return c.approx + c.bound }

// semantic returns up to limit memories passing f, most similar to the
// unit vector q first (ties: the later saved), with a cosine similarity
// above zero.
func (s *Store) semantic(ctx context.Context, q []float32, f Filter, limit int) ([]hit, error) {
	x := s.index
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.refresh(ctx, s, s.opts.Embedder.Model()); err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	if x.dims == 0 || len(q) != x.dims {
		return nil, nil // no vectors, or the query is not comparable
	}
	mf := x.filter(f)
	window := semWindow
	if x.window > 0 {
		window = x.window
	}
	pos := x.nearest(signBits(q), &mf, max(window, 16*limit))
	x.cands = slices.Grow(x.cands[:0], len(pos))[:len(pos)]
	cands := x.cands
	parallel(len(pos), 1<<20/x.dims, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p := pos[i]
			cands[i] = cand{pos: p, approx: x.approx(q, p), bound: x.bound(p)}
		}
	})
	// Exact cosines, in two rounds: first of the limit best by
	// approximate cosine; then of the others whose upper bound reaches
	// the limit-th best exact cosine of the first (none below it can be
	// among the limit best) and zero (a cosine must be above zero).
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Compare(b.approx, a.approx) })
	n := min(limit, len(cands))
	out, err := s.exact(ctx, x, q, cands[:n], nil)
	if err != nil {
		return nil, err
	}
	floor := 0.0
	if len(out) >= limit {
		floor = max(floor, out[limit-1].cos)
	}
	more := cands[n:n] // in place: cands[n:] is read ahead of what is kept
	for _, c := range cands[n:] {
		if u := c.upper(); u >= floor && u > 0 {
			more = append(more, c)
		}
	}
	if out, err = s.exact(ctx, x, q, more, out); err != nil {
		return nil, err
	}
	return out[:min(limit, len(out))], nil
}

// exact reads the vectors of cs from the file and adds to out those with
// an exact cosine above zero, returning out sorted: higher cosine first,
// ties to the later saved.
func (s *Store) exact(ctx context.Context, x *vecIndex, q []float32, cs []cand, out []hit) ([]hit, error) {
	if len(cs) == 0 {
		return out, nil
	}
	if x.at == nil {
		x.at = map[int64]int32{}
	}
	pos := x.at
	clear(pos)
	args := slices.Grow(x.args[:0], len(cs))[:len(cs)]
	x.args = args
	for i, c := range cs {
		vseq := x.vseqs[c.pos]
		pos[vseq], args[i] = c.pos, vseq
	}
	x.reads += int64(len(cs))
	// A vector replaced or deleted since the index was read is gone from
	// the file: it is not found.
	rows, err := s.db.QueryContext(ctx, `SELECT vseq, vec FROM vectors_data
		WHERE vseq IN (`+strings.Repeat("?,", len(args)-1)+`?)`, args...)
	if err != nil {
		return nil, fmt.Errorf("rank vectors: %w", err)
	}
	defer rows.Close()
	var b sql.RawBytes
	for rows.Next() {
		var vseq int64
		if err := rows.Scan(&vseq, &b); err != nil {
			return nil, err
		}
		m := &x.meta[pos[vseq]]
		if cos := float64(dotBlob(q, b)); cos > 0 {
			out = append(out, hit{seq: m.seq, updated: m.updated, cos: cos})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.cos, a.cos), cmp.Compare(b.seq, a.seq))
	})
	return out, nil
}
