package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestHybridMatchesStraightforward checks hybrid search, with every fast
// path it takes (the lexical index and its sets, the vector index's
// shortlist and exact re-rank, the data_version check, the two parts run
// side by side), against the rule of docs/memory.md computed the plain
// way: the lexical ranking from SQL alone, the semantic ranking by brute
// force over every vector, fused by reciprocal rank. Same memories, same
// order, same scores, for generated queries under several filters and
// limits, before and after new saves. The store holds fewer vectors than
// the window, where the semantic ranking is exact by design.
func TestHybridMatchesStraightforward(t *testing.T) {
	ctx := context.Background()
	st, vocab := openVecStore(t, 1500, 31)
	st.lex.minDF = 20 // every term of 20 memories or more gets a set
	g := newTextGen(vocab, 32)
	queries := randomQueries(vocab, 12, 33)
	for range 4 {
		queries = append(queries, g.word()+" "+g.word()) // frequent words
	}
	filters := []Filter{
		{},
		{Workspace: "ws1", Viewer: "agent3"},
		{Scope: ScopeGlobal},
		{Workspace: "ws2", Viewer: "agent9", Tags: []string{"go"}},
	}
	ids := func() map[int64]string {
		rows, err := st.db.Query(`SELECT seq, id FROM memories`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]string{}
		for rows.Next() {
			var seq int64
			var id string
			if err := rows.Scan(&seq, &id); err != nil {
				t.Fatal(err)
			}
			out[seq] = id
		}
		return out
	}
	compare := func(stage string) {
		t.Helper()
		warmLex(t, st, queries)
		idOf := ids()
		checked := 0
		for fi, f := range filters {
			all := loadAll(t, st, f)
			for _, text := range queries {
				for _, limit := range []int{10, 60} {
					f.Limit = limit
					got, err := st.Search(ctx, Query{Text: text, Mode: ModeHybrid, Filter: f})
					if err != nil {
						t.Fatal(err)
					}
					want := straightHybrid(t, st, all, text, f, limit)
					var g, w strings.Builder
					for _, r := range got {
						fmt.Fprintf(&g, "%s:%v:%+v\n", r.ID, r.Score, *r.Scores)
					}
					for _, h := range want {
						fmt.Fprintf(&w, "%s:%v:%+v\n", idOf[h.seq], h.score, *h.scores)
					}
					if g.String() != w.String() {
						t.Fatalf("%s: hybrid search %q (filter %d, limit %d):\n got\n%s want\n%s", stage, text, fi, limit, g.String(), w.String())
					}
					checked += len(want)
				}
			}
		}
		if checked == 0 {
			t.Fatalf("%s: no query found anything", stage)
		}
	}
	compare("imported")
	for i := range 30 {
		m := g.memory(st.opts.Now())
		if i%2 == 0 {
			m.Text = queries[i%len(queries)] + " " + m.Text
		}
		if _, _, err := st.Save(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.EmbedNow(ctx); err != nil {
		t.Fatal(err)
	}
	compare("saved")
}

// fusedHit is one result of straightHybrid.
type fusedHit struct {
	seq    int64
	score  float64
	scores *Scores
}

// straightHybrid is the hybrid rule of docs/memory.md, computed the plain
// way: both rankings read fuseDepth (or limit) deep, the lexical one by
// SQL alone, the semantic one by brute force over all (every vector
// passing f); memories holding every word
// first in lexical order, then the rest by fused score, ties to the newer.
func straightHybrid(t testing.TB, st *Store, all *allVectors, text string, f Filter, limit int) []fusedHit {
	t.Helper()
	depth := max(limit, fuseDepth)
	st.lex.mu.Lock()
	st.lex.off = true
	st.lex.mu.Unlock()
	defer func() {
		st.lex.mu.Lock()
		st.lex.off = false
		st.lex.mu.Unlock()
	}()
	var lex []candidate
	if terms := queryTerms(text); len(terms) > 0 {
		var err error
		if lex, err = st.lexical(context.Background(), terms, f, depth); err != nil {
			t.Fatal(err)
		}
	}
	sem := all.rank(queryVec(t, st, text), depth)
	by := map[int64]*fusedHit{}
	at := func(seq int64) *fusedHit {
		if by[seq] == nil {
			by[seq] = &fusedHit{seq: seq, scores: &Scores{}}
		}
		return by[seq]
	}
	for i, c := range lex {
		h := at(c.seq)
		h.scores.Lexical, h.scores.LexicalRank, h.scores.Every = c.score, i+1, c.every
		h.scores.Fused += 1 / float64(rrfK+i+1)
	}
	for i, s := range sem {
		h := at(s.seq)
		h.scores.Semantic, h.scores.SemanticRank = s.cos, i+1
		h.scores.Fused += 1 / float64(rrfK+i+1)
	}
	var out []fusedHit
	for _, h := range by {
		h.score = h.scores.Fused
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b fusedHit) int {
		ea, eb := a.scores.Every, b.scores.Every
		switch {
		case ea && eb:
			return cmp.Compare(a.scores.LexicalRank, b.scores.LexicalRank)
		case ea != eb:
			if ea {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(b.seq, a.seq))
	})
	return out[:min(limit, len(out))]
}
