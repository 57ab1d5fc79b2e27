package memory

import (
	"cmp"
	"context"
	"database/sql"
	"math/bits"
	"slices"
	"strings"
)

// The passes of lexical search over the lexIndex (held by acquire). Each
// returns exactly what candidates returns for the same expression, filter
// and window: the newest window memories that match and pass the filter,
// newest first.

// every is pass 1: the memories holding every term. dfs are the terms'
// document frequencies and heads their newest matches (estimateDF).
func (ix *lexIndex) every(ctx context.Context, db *sql.DB, terms []string, dfs []float64, heads [][]int64, st storeState, f Filter, window int) ([]candidate, error) {
	var rare []string
	var bms []*termBits
	seen := map[string]bool{}
	for i, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		if len(terms) > 1 && ix.common(dfs[i], st.docs) {
			b, err := ix.bitmap(ctx, db, t, st.maxSeq)
			if err != nil {
				return nil, err
			}
			if b != nil {
				bms = append(bms, b)
				continue
			}
		}
		rare = append(rare, t)
	}
	lf := ix.filter(f)
	if len(rare) == 1 && len(terms) == 1 {
		return ix.newest(ctx, db, rare[0], heads[0], nil, st.maxSeq, &lf, window)
	}
	if len(rare) > 0 {
		return ix.newest(ctx, db, strings.Join(rare, " "), nil, bms, st.maxSeq, &lf, window)
	}
	return ix.fromBitmaps(ctx, db, bms, st, &lf, window)
}

// one is pass 2 for one term: the newest window memories holding term
// (found in df memories, the newest of them head) and passing f, from
// its bitmap when it has one.
func (ix *lexIndex) one(ctx context.Context, db *sql.DB, term string, df float64, head []int64, st storeState, f Filter, window int) ([]candidate, error) {
	lf := ix.filter(f)
	if ix.common(df, st.docs) {
		b, err := ix.bitmap(ctx, db, term, st.maxSeq)
		if err != nil {
			return nil, err
		}
		if b != nil {
			return ix.fromBitmaps(ctx, db, []*termBits{b}, st, &lf, window)
		}
	}
	return ix.newest(ctx, db, term, head, nil, st.maxSeq, &lf, window)
}

// fromBitmaps returns the newest window memories that every bitmap holds
// and that pass lf, newest first.
func (ix *lexIndex) fromBitmaps(ctx context.Context, db *sql.DB, bms []*termBits, st storeState, lf *lexFilter, window int) ([]candidate, error) {
	ix.bitmapRuns++
	and := func(w int64) uint64 {
		x := ^uint64(0)
		for _, b := range bms {
			x &= b.word(w)
		}
		return x
	}
	var out []candidate
	w := st.maxSeq >> 6
	x := and(w)
	for {
		if len(out) < window {
			for x == 0 && w > 0 {
				w--
				x = and(w)
			}
			if x != 0 {
				top := 63 - bits.LeadingZeros64(x)
				x &^= 1 << top
				if seq := w<<6 | int64(top); seq <= st.maxSeq && ix.pass(seq, lf) {
					out = append(out, ix.candidate(seq))
				}
				continue
			}
		}
		if ix.alive == st.docs || len(out) == 0 {
			return out, nil
		}
		// Meta holds seqs that re-saves left behind: check these memories
		// against the table, and look further if some were gone.
		n := len(out)
		var err error
		if out, err = ix.verify(ctx, db, out); err != nil {
			return nil, err
		}
		if len(out) == n || (x == 0 && w == 0) {
			return out, nil
		}
	}
}

// newest returns the newest window memories that match expr in FTS5, hold
// every bitmap's term and pass lf, newest first. head, when not nil, is
// the newest dfSample matches of expr up to maxSeq (estimateDF's), read
// instead of asking FTS5 for the first chunk.
func (ix *lexIndex) newest(ctx context.Context, db *sql.DB, expr string, head []int64, bms []*termBits, maxSeq int64, lf *lexFilter, window int) ([]candidate, error) {
	var out []candidate
	below := maxSeq + 1
	chunk := 4 * window
	for len(out) < window {
		var seqs []int64
		if head != nil {
			seqs, chunk, head = head, dfSample, nil
		} else {
			var list sql.NullString
			if err := db.QueryRowContext(ctx, `SELECT group_concat(rowid) FROM (SELECT rowid FROM memories_fts
				WHERE memories_fts MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?)`, expr, below, chunk).Scan(&list); err != nil {
				return nil, err
			}
			seqs = slices.Collect(seqList(list.String))
			slices.SortFunc(seqs, func(a, b int64) int { return cmp.Compare(b, a) })
		}
	match:
		for _, seq := range seqs {
			for _, b := range bms {
				if !b.has(seq) {
					continue match
				}
			}
			if ix.pass(seq, lf) {
				if out = append(out, ix.candidate(seq)); len(out) == window {
					break
				}
			}
		}
		if len(seqs) < chunk {
			break
		}
		below = seqs[len(seqs)-1]
		chunk = min(max(4*chunk, 4*window), 1<<16)
	}
	return out, nil
}

// verify drops the candidates whose memories are gone from the table,
// marking them gone in meta.
func (ix *lexIndex) verify(ctx context.Context, db *sql.DB, cs []candidate) ([]candidate, error) {
	if len(cs) == 0 {
		return cs, nil
	}
	ix.verified += len(cs)
	args := make([]any, len(cs))
	for i, c := range cs {
		args[i] = c.seq
	}
	rows, err := db.QueryContext(ctx, `SELECT seq FROM memories WHERE seq IN (`+strings.Repeat("?,", len(cs)-1)+`?)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	live := make(map[int64]bool, len(cs))
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		live[seq] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := cs[:0]
	for _, c := range cs {
		if live[c.seq] {
			out = append(out, c)
			continue
		}
		ix.scope[c.seq] = scopeNone
		ix.alive--
	}
	return out, nil
}
