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
//     query by signQuery's distance (every one when no more pass);
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

// qPrefetch is how many rows ahead step 3 fetches the int8 copies.
const qPrefetch = 4

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

// pick is a vector that may be among the best, copied out of the index
// so that its exact cosine is computed without the index's lock.
type pick struct {
	vseq, seq, updated int64
	approx, upper      float64
}

// semantic returns up to limit memories passing f, most similar to the
// unit vector q first (ties: the later saved), with a cosine similarity
// above zero.
//
// The index's lock is held only while the candidates are chosen (steps 1
// to 3, all in memory); the vectors are read from the file without it, so
// concurrent searches wait for each other's scan, not for SQLite.
func (s *Store) semantic(ctx context.Context, q []float32, f Filter, limit int) ([]hit, error) {
	picks, err := s.index.shortlist(ctx, s, q, f, limit)
	if err != nil || len(picks) == 0 {
		return nil, err
	}
	// Exact cosines, in two rounds: first of the limit best by
	// approximate cosine; then of the others whose upper bound reaches
	// the limit-th best exact cosine of the first (none below it can be
	// among the limit best) and zero (a cosine must be above zero).
	n := min(limit, len(picks))
	out, err := s.exact(ctx, q, picks[:n], nil)
	if err != nil {
		return nil, err
	}
	floor := 0.0
	if len(out) >= limit {
		floor = max(floor, out[limit-1].cos)
	}
	more := picks[n:n] // in place: picks[n:] is read ahead of what is kept
	for _, p := range picks[n:] {
		if p.upper >= floor && p.upper > 0 {
			more = append(more, p)
		}
	}
	if out, err = s.exact(ctx, q, more, out); err != nil {
		return nil, err
	}
	return out[:min(limit, len(out))], nil
}

// shortlist brings the index up to date and returns, best approximate
// cosine first, the vectors of the window that may be among the limit
// best: those whose upper bound is above zero and reaches the limit-th
// best lower bound (no vector below it can be among the limit best, since
// limit vectors are at least that close; the limit best by approximate
// cosine all reach it).
func (x *vecIndex) shortlist(ctx context.Context, s *Store, q []float32, f Filter, limit int) ([]pick, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.refresh(ctx, s, s.opts.Embedder.Model()); err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	if x.dims == 0 || len(q) != x.dims || limit <= 0 {
		return nil, nil // no vectors, or the query is not comparable
	}
	mf := x.filter(f)
	window := semWindow
	if x.window > 0 {
		window = x.window
	}
	pos := x.nearest(newSignQuery(q, x.words), &mf, max(window, 16*limit))
	x.cands = slices.Grow(x.cands[:0], len(pos))[:len(pos)]
	cands := x.cands
	parallel(len(pos), 1<<20/x.dims, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			// The window's rows are scattered: the one a few ahead is
			// fetched while this one is ranked.
			if i+qPrefetch < hi {
				prefetchRange(&x.q8[int(pos[i+qPrefetch])*x.dims], x.dims)
			}
			p := pos[i]
			cands[i] = cand{pos: p, approx: x.approx(q, p), bound: x.bound(p)}
		}
	})
	floor := 0.0
	if len(cands) >= limit {
		lows := slices.Grow(x.lows[:0], len(cands))
		for i := range cands {
			lows = append(lows, cands[i].approx-cands[i].bound)
		}
		x.lows = lows
		floor = max(floor, kthLargest(lows, limit))
	}
	var picks []pick
	for i := range cands {
		c := &cands[i]
		if u := c.upper(); u >= floor && u > 0 {
			m := &x.meta[c.pos]
			picks = append(picks, pick{vseq: x.vseqs[c.pos], seq: m.seq, updated: m.updated, approx: c.approx, upper: u})
		}
	}
	slices.SortFunc(picks, func(a, b pick) int { return cmp.Compare(b.approx, a.approx) })
	return picks, nil
}

// exact reads the vectors of ps from the file and adds to out those with
// an exact cosine above zero, returning out sorted: higher cosine first,
// ties to the later saved.
func (s *Store) exact(ctx context.Context, q []float32, ps []pick, out []hit) ([]hit, error) {
	if len(ps) == 0 {
		return out, nil
	}
	at := make(map[int64]int, len(ps))
	args := make([]any, len(ps))
	for i, p := range ps {
		at[p.vseq], args[i] = i, p.vseq
	}
	s.index.reads.Add(int64(len(ps)))
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
		p := &ps[at[vseq]]
		if cos := float64(dotBlob(q, b)); cos > 0 {
			out = append(out, hit{seq: p.seq, updated: p.updated, cos: cos})
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

// kthLargest returns the k-th largest of xs (1 ≤ k ≤ len(xs)), what
// sorting xs ascending would put at len(xs)-k, reordering xs: by
// selection, in linear time, not a sort (the window is 2,048 long and k
// the limit). A NaN in xs makes it sort.
func kthLargest(xs []float64, k int) float64 {
	want := len(xs) - k // the index in ascending order
	for _, x := range xs {
		if x != x {
			slices.Sort(xs)
			return xs[want]
		}
	}
	lo, hi := 0, len(xs)-1
	for lo < hi {
		// Median of three as the pivot, then Hoare's partition.
		mid := lo + (hi-lo)/2
		a, b, c := xs[lo], xs[mid], xs[hi]
		p := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for xs[i] < p {
				i++
			}
			for xs[j] > p {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return xs[want] // between the parts: equal to the pivot
		}
	}
	return xs[want]
}
