package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestLexIndexRanksAsSQL checks that lexical search over the in-memory
// index (meta and the terms' sets) returns exactly what the SQL alone
// returns: the same memories, in the same order, with the same scores,
// ties (equal scores) broken the same way (the newer save first), for
// generated queries (common words, rare words, phrases, prefixes) under
// several filters; and again after saves, re-saves (which leave old seqs
// behind in the index) and a deletion (which drops the index). With no
// set kept (minDF above every term's count) FTS5 finds the terms that
// the newest matches read for the estimate do not hold whole.
func TestLexIndexRanksAsSQL(t *testing.T) {
	for _, tc := range []struct {
		name  string
		minDF int
		kept  bool
	}{
		{"sets", 0, true},
		{"fts5", 1 << 40, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testLexIndexRanksAsSQL(t, 4000, tc.minDF, tc.kept)
		})
	}
}

func testLexIndexRanksAsSQL(t *testing.T, n, minDF int, kept bool) {
	ctx := context.Background()
	vocab := benchVocab(t)
	c := newClock()
	st := openTest(t, c)
	st.lex.minDF = minDF
	g := newTextGen(vocab, 11)
	var ms []Memory
	for range n {
		m := g.memory(c.Now())
		m.Created = c.Now().Add(-time.Duration(g.r.Int64N(int64(90 * 24 * time.Hour)))).Truncate(time.Millisecond)
		m.Updated = m.Created
		ms = append(ms, m)
	}
	if _, _, err := st.ImportMemories(ctx, ms); err != nil {
		t.Fatal(err)
	}

	qr := rand.New(rand.NewPCG(5, 8))
	var queries []string
	for range 50 {
		var w []string
		for range 1 + qr.IntN(3) {
			switch qr.IntN(3) {
			case 0:
				w = append(w, vocab[100+qr.IntN(len(vocab)-100)]) // rare
			default:
				w = append(w, g.word()) // as frequent as in the text
			}
		}
		queries = append(queries, strings.Join(w, " "))
	}
	queries = append(queries, "the the", `"if err"`, "if err*", "the*", "th*", "nosuchword the", "the nosuchword if")
	filters := []Filter{
		{},
		{Workspace: "ws1", Viewer: "agent3"},
		{Workspace: "ws2", Viewer: "agent9", Author: "agent9"},
		{Scope: ScopeGlobal},
		{Workspace: "nosuchws", Viewer: "nobody"},
	}

	compare := func(stage string) {
		t.Helper()
		warmLex(t, st, queries)
		for _, q := range queries {
			for fi, f := range filters {
				for _, limit := range []int{10 + 50*(fi%2)} {
					st.lex.off = true
					want, err := st.Search(ctx, Query{Text: q, Filter: withLimit(f, limit), Mode: ModeLexical})
					st.lex.off = false
					if err != nil {
						t.Fatal(err)
					}
					got, err := st.Search(ctx, Query{Text: q, Filter: withLimit(f, limit), Mode: ModeLexical})
					if err != nil {
						t.Fatal(err)
					}
					if w, g := resultKey(want), resultKey(got); w != g {
						t.Fatalf("%s: search %q (filter %d, limit %d):\n index %s\n   sql %s", stage, q, fi, limit, g, w)
					}
				}
			}
		}
	}
	compare("imported")
	st.lex.mu.Lock()
	runs, nsets := st.lex.bitmapRuns, len(st.lex.terms)
	st.lex.mu.Unlock()
	if runs == 0 {
		t.Fatal("no search was answered from the sets alone")
	}
	if kept != (nsets > 0) {
		t.Fatalf("%d sets kept, want some: %v", nsets, kept)
	}

	// New memories, and re-saves: each re-save moves a memory to a new
	// seq and leaves its old one in the index.
	for i := range 300 {
		c.Advance(time.Minute)
		m := ms[i*7]
		if i%3 == 0 {
			m = g.memory(c.Now())
		}
		m.ID, m.Created, m.Updated = "", time.Time{}, time.Time{}
		mustSave(t, st, m)
	}
	compare("saved")
	st.lex.mu.Lock()
	verified := st.lex.verified
	st.lex.mu.Unlock()
	if verified == 0 {
		t.Fatal("no memory found by the sets alone was checked against the table after re-saves")
	}

	// A deletion drops the index; it is loaded again.
	compare("before forgetting") // every set complete up to the last seq
	all, err := st.List(ctx, Filter{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if _, err := st.Forget(ctx, m.ID); err != nil {
			t.Fatal(err)
		}
	}
	compare("forgotten")
	// The newest were forgotten, so SQLite hands their seqs out again, to
	// memories with other words.
	for range 5 {
		c.Advance(time.Minute)
		mustSave(t, st, g.memory(c.Now()))
	}
	compare("seqs reused")
}

// warmLex searches until the index has loaded and made the sets the
// queries ask for (with the store's own filter-less search, so the
// queries' first passes ask for the same sets as filtered ones).
func warmLex(t testing.TB, st *Store, queries []string) {
	t.Helper()
	warmLexFor(t, st, queries, Query{Mode: ModeLexical})
}

// warmLexFor is warmLex with searches like q (its mode, filter, limit).
func warmLexFor(t testing.TB, st *Store, queries []string, q Query) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		st.lex.mu.Lock()
		asked := st.lex.asked
		st.lex.mu.Unlock()
		for _, text := range append([]string{"x"}, queries...) {
			q.Text = text
			if _, err := st.Search(context.Background(), q); err != nil {
				t.Fatal(err)
			}
		}
		st.lex.mu.Lock()
		done := st.lex.ready && len(st.lex.building) == 0 && st.lex.asked == asked
		st.lex.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the search index was not ready within 5 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func resultKey(rs []Result) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%s:%v ", r.ID, r.Score)
	}
	return b.String()
}

func withLimit(f Filter, limit int) Filter {
	f.Limit = limit
	return f
}
