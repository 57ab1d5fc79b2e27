package memory

import (
	"cmp"
	"context"
	"database/sql"
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
	var sets []*termBits
	seen := map[string]bool{}
	for i, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		b, err := ix.set(ctx, db, t, dfs[i], heads[i], st)
		if err != nil {
			return nil, err
		}
		if b != nil {
			sets = append(sets, b)
			continue
		}
		rare = append(rare, t)
	}
	lf := ix.filter(f)
	if len(rare) == 1 && len(terms) == 1 {
		return ix.newest(ctx, db, rare[0], heads[0], nil, st.maxSeq, &lf, window)
	}
	if len(rare) > 0 {
		return ix.newest(ctx, db, strings.Join(rare, " "), nil, sets, st.maxSeq, &lf, window)
	}
	return ix.fromSets(ctx, db, sets, st, &lf, window)
}

// one is pass 2 for one term: the newest window memories holding term
// (found in df memories, the newest of them head) and passing f, from
// its set when it has one.
func (ix *lexIndex) one(ctx context.Context, db *sql.DB, term string, df float64, head []int64, st storeState, f Filter, window int) ([]candidate, error) {
	lf := ix.filter(f)
	b, err := ix.set(ctx, db, term, df, head, st)
	if err != nil {
		return nil, err
	}
	if b != nil {
		return ix.fromSets(ctx, db, []*termBits{b}, st, &lf, window)
	}
	return ix.newest(ctx, db, term, head, nil, st.maxSeq, &lf, window)
}

// set returns the set of the memories up to st.maxSeq that hold term
// (found in df memories, the newest of them head), or nil when there is
// none yet: head itself when it holds every match, else the set kept
// for term, which is made in the background on its first search.
func (ix *lexIndex) set(ctx context.Context, db *sql.DB, term string, df float64, head []int64, st storeState) (*termBits, error) {
	if st.maxSeq > maxSetSeq {
		return nil, nil
	}
	if len(head) < dfSample {
		return headSet(head, st.maxSeq), nil
	}
	if !ix.kept(df) {
		return nil, nil
	}
	return ix.bitmap(ctx, db, term, st.maxSeq)
}

// head returns what Store.newestMatches returns for term, read from the
// term's set instead of FTS5, or nil when it cannot: the term has no set
// yet, or meta holds seqs that re-saves left behind and no search has
// found gone yet (which the set may hold too, and FTS5 does not). Call
// with mu held (acquire).
func (ix *lexIndex) head(ctx context.Context, db *sql.DB, term string, st storeState) ([]int64, error) {
	if ix.terms[term] == nil || ix.alive != st.docs || st.maxSeq > maxSetSeq {
		return nil, nil
	}
	b, err := ix.bitmap(ctx, db, term, st.maxSeq)
	if err != nil || b == nil {
		return nil, err
	}
	return b.newest(dfSample, st.maxSeq, func(seq int64) bool { return ix.scope[seq] != scopeNone }), nil
}

// fromSets returns the newest window memories that every set holds and
// that pass lf, newest first.
func (ix *lexIndex) fromSets(ctx context.Context, db *sql.DB, sets []*termBits, st storeState, lf *lexFilter, window int) ([]candidate, error) {
	ix.bitmapRuns++
	next := andNewest(sets, st.maxSeq)
	var out []candidate
	for {
		more := true
		for len(out) < window {
			var seq int64
			if seq, more = next(); !more {
				break
			}
			if ix.pass(seq, lf) {
				out = append(out, ix.candidate(seq))
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
		if len(out) == n || !more {
			return out, nil
		}
	}
}

// newest returns the newest window memories that match expr in FTS5, hold
// every set's term and pass lf, newest first. head, when not nil, is
// the newest dfSample matches of expr up to maxSeq (estimateDF's), read
// instead of asking FTS5 for the first chunk.
func (ix *lexIndex) newest(ctx context.Context, db *sql.DB, expr string, head []int64, sets []*termBits, maxSeq int64, lf *lexFilter, window int) ([]candidate, error) {
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
			for _, b := range sets {
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
