package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// runs is how many runs of consecutive positions pos (ascending) makes.
func runs(pos []int32) int {
	n := 0
	for i, p := range pos {
		if i == 0 || p != pos[i-1]+1 {
			n++
		}
	}
	return n
}

// TestIndexRowsInFilterOrder checks that the rows a search's filter
// passes (a workspace with the global scope, a viewer) lie in a few runs
// of the index, not scattered over it: on load, and again once the
// memories saved since are more than an eighth of the rows.
func TestIndexRowsInFilterOrder(t *testing.T) {
	st, vocab := openVecStore(t, 1200, 41)
	ctx := context.Background()
	f := Filter{Workspace: "ws1", Viewer: "agent3"}
	check := func(step string) {
		t.Helper()
		if _, err := st.semantic(ctx, queryVec(t, st, vocab[200]), f, 10); err != nil {
			t.Fatal(err)
		}
		x := st.index
		x.mu.Lock()
		defer x.mu.Unlock()
		mf := x.filter(f)
		pass := x.passing(&mf)
		// The global scope's rows, the workspace's own, the viewer's
		// agent-scoped ones: three runs.
		if r := runs(pass); r > 3 || len(pass) < 200 {
			t.Fatalf("%s: the %d rows passing %+v lie in %d runs of %d rows, want at most 3", step, len(pass), f, r, len(x.vseqs))
		}
	}
	check("loaded")
	g := newTextGen(vocab, 42)
	now := st.opts.Now()
	var ms []Memory
	for i := range 300 {
		m := g.memory(now)
		m.ID = fmt.Sprintf("new%05d", i)
		ms = append(ms, m)
	}
	if _, _, err := st.ImportMemories(ctx, ms); err != nil {
		t.Fatal(err)
	}
	if err := st.EmbedNow(ctx); err != nil {
		t.Fatal(err)
	}
	check("300 saved")
}

// TestSemanticOrderChangesNothing checks that the order of the index's
// rows changes no result: the coarse pass keeps the same window (ties at
// its edge included), and the searches, with a window smaller than what
// passes, give the same results after the rows are shuffled.
func TestSemanticOrderChangesNothing(t *testing.T) {
	st, vocab := openVecStore(t, 800, 43)
	ctx := context.Background()
	st.index.window = 40
	queries := randomQueries(vocab, 100, 11)
	filters := []Filter{{Workspace: "ws1", Viewer: "agent3"}, {Author: "agent7"}, {}}
	if _, err := st.semantic(ctx, queryVec(t, st, "load"), Filter{}, 10); err != nil {
		t.Fatal(err)
	}
	var qs []*signQuery
	for _, text := range queries {
		qs = append(qs, newSignQuery(queryVec(t, st, text), st.index.words))
	}
	search := func() (windows [][]int64, results [][]hit) {
		x := st.index
		for _, f := range filters {
			x.mu.Lock()
			mf := x.filter(f)
			for _, sq := range qs {
				var w []int64
				for _, p := range x.nearest(sq, &mf, 16) {
					w = append(w, x.vseqs[p])
				}
				slices.Sort(w)
				windows = append(windows, w)
			}
			x.mu.Unlock()
			for _, text := range queries {
				got, err := st.semantic(ctx, queryVec(t, st, text), f, 10)
				if err != nil {
					t.Fatal(err)
				}
				results = append(results, got)
			}
		}
		return windows, results
	}
	wantWindows, want := search()
	r := rand.New(rand.NewPCG(12, 1))
	for round := range 3 {
		x := st.index
		x.mu.Lock()
		perm := make([]int32, len(x.vseqs))
		for i := range perm {
			perm[i] = int32(i)
		}
		r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		x.permute(perm)
		at := make([]int32, len(perm))
		for i, p := range perm {
			at[p] = int32(i)
		}
		for id, p := range x.byID {
			x.byID[id] = at[p]
		}
		x.keyGen++
		x.mu.Unlock()
		windows, got := search()
		if !slices.EqualFunc(windows, wantWindows, slices.Equal) {
			t.Fatalf("round %d: the coarse pass's window changed with the rows' order", round)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("round %d: the results changed with the rows' order", round)
		}
	}
}
