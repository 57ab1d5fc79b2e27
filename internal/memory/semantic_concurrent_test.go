package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSemanticFilterCacheFollowsChanges checks the rows each filter
// passes, which the index keeps between searches, after each kind of
// change: memories added, a memory saved again with a new tag, every
// vector made again (each old row dies) and a memory forgotten. The
// window is smaller than what passes, so a row wrongly kept or left out
// changes the result; the reference is a store opened afresh on the same
// file, whose index has no past.
func TestSemanticFilterCacheFollowsChanges(t *testing.T) {
	st, vocab := openVecStore(t, 600, 31)
	ctx := context.Background()
	const window = 48
	st.index.window = window
	queries := randomQueries(vocab, 8, 9)
	tag := vocab[160]
	filters := []Filter{
		{Workspace: "ws1", Viewer: "agent3"},
		{Tags: []string{tag}},
		{Author: "agent7"},
		{},
	}
	same := func(step string) {
		t.Helper()
		fresh, err := Open(st.Path(), &Options{Now: st.opts.Now, Embedder: st.opts.Embedder, NoBackground: true})
		if err != nil {
			t.Fatal(err)
		}
		defer fresh.Close()
		fresh.index.window = window
		for _, f := range filters {
			for _, text := range queries {
				q := queryVec(t, st, text)
				got, err := st.semantic(ctx, q, f, 10)
				if err != nil {
					t.Fatal(err)
				}
				want, err := fresh.semantic(ctx, q, f, 10)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s, %+v, query %q:\n got %v\nwant %v", step, f, text, got, want)
				}
			}
		}
	}
	same("loaded")
	var saved []Memory
	for i := range 40 {
		m, _, err := st.Save(ctx, Memory{Text: fmt.Sprintf("%s %s note %d", vocab[120+i%9], vocab[200+i], i), Workspace: "ws1", Author: "agent3"})
		if err != nil {
			t.Fatal(err)
		}
		saved = append(saved, m)
	}
	if err := st.EmbedNow(ctx); err != nil {
		t.Fatal(err)
	}
	same("memories added")
	for _, m := range saved[:20] {
		if _, _, err := st.Save(ctx, Memory{Text: m.Text, Workspace: "ws1", Author: "agent3", Tags: []string{tag}}); err != nil {
			t.Fatal(err)
		}
	}
	same("saved again with a tag")
	if err := st.Reindex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	same("every vector made again")
	if _, err := st.Forget(ctx, saved[3].ID); err != nil {
		t.Fatal(err)
	}
	same("forgotten")
}

// TestSemanticConcurrentSaveAndSearch runs searches by meaning (semantic
// and hybrid, several filters) while memories are saved, embedded, saved
// again and forgotten: no search fails or returns a badly ordered result,
// and, once the writes stop, the search equals brute force. Run with
// -race, it checks that nothing the search reads without the index's lock
// is written under it.
func TestSemanticConcurrentSaveAndSearch(t *testing.T) {
	st, vocab := openVecStore(t, 300, 32)
	ctx := context.Background()
	filters := []Filter{{}, {Workspace: "ws1", Viewer: "agent3"}, {Tags: []string{"fresh"}}}
	queries := randomQueries(vocab, 10, 11)
	var done atomic.Bool
	var searches atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !done.Load() || i < 10; i++ {
				mode := []string{ModeSemantic, ModeHybrid}[(g+i)%2]
				res, err := st.Search(ctx, Query{Text: queries[(g+i)%len(queries)], Mode: mode, Filter: filters[i%len(filters)]})
				if err != nil {
					errs <- fmt.Errorf("%s search: %w", mode, err)
					return
				}
				if mode == ModeSemantic && !slices.IsSortedFunc(res, func(a, b Result) int { return cmp.Compare(b.Score, a.Score) }) {
					errs <- fmt.Errorf("semantic results out of order: %v", res)
					return
				}
				searches.Add(1)
			}
		}()
	}
	var saved []Memory
	for i := range 60 {
		m, _, err := st.Save(ctx, Memory{Text: fmt.Sprintf("%s %s entry %d", vocab[110+i%13], vocab[220+i], i), Workspace: "ws1", Author: "agent3"})
		if err != nil {
			t.Fatal(err)
		}
		saved = append(saved, m)
		if err := st.EmbedNow(ctx); err != nil {
			t.Fatal(err)
		}
		switch {
		case i%7 == 3:
			if _, _, err := st.Save(ctx, Memory{Text: saved[i-1].Text, Workspace: "ws1", Author: "agent3", Tags: []string{"fresh"}}); err != nil {
				t.Fatal(err)
			}
		case i%10 == 9:
			if _, err := st.Forget(ctx, saved[i-4].ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d searches beside 60 saves", searches.Load())
	for _, f := range filters {
		for _, text := range queries {
			q := queryVec(t, st, text)
			got, err := st.semantic(ctx, q, f, 10)
			if err != nil {
				t.Fatal(err)
			}
			if want := bruteForce(t, st, q, f, 10); !slices.Equal(got, want) {
				t.Fatalf("after the writes, %+v, query %q:\n got %v\nwant %v", f, text, got, want)
			}
		}
	}
}
