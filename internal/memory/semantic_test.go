package memory

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/embedtest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// openSemantic opens a store in a fresh folder with the stand-in embedder
// at srv (Ollama's API), retrying fast, closed with the test.
func openSemantic(t testing.TB, srv *embedtest.Server, opts Options) *Store {
	t.Helper()
	em, err := NewEmbedder(EmbedderConfig{Provider: ProviderOllama, URL: srv.URL, Model: embedtest.Model})
	if err != nil {
		t.Fatal(err)
	}
	opts.Embedder = em
	if opts.EmbedRetry == 0 {
		opts.EmbedRetry, opts.EmbedRetryMax = 5*time.Millisecond, 40*time.Millisecond
	}
	st, err := Open(filepath.Join(t.TempDir(), "memory.db"), &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// waitEmbedded polls until no memory of st waits for its vector.
func waitEmbedded(t testing.TB, st *Store) {
	t.Helper()
	testutil.Eventually(t, func() error {
		n, err := st.Pending(context.Background())
		if err == nil && n > 0 {
			err = fmt.Errorf("%d memories wait for their vectors", n)
		}
		return err
	})
}

func search(t testing.TB, st API, mode, text string) []Result {
	t.Helper()
	rs, err := st.Search(context.Background(), Query{Text: text, Mode: mode})
	if err != nil {
		t.Fatalf("search %s %q: %v", mode, text, err)
	}
	return rs
}

var semanticNotes = []string{
	"we deploy with ArgoCD",
	"use pnpm for the js packages",
	"postgres holds the schema of the billing service",
	"the signing keys live in vault",
	"pytest runs the integration tests",
	"cats are the best pets",
}

func TestEmbedderProviders(t *testing.T) {
	srv := embedtest.Start(t, 32)
	cases := []struct {
		name    string
		c       EmbedderConfig
		wantErr string
	}{
		{"ollama", EmbedderConfig{Provider: ProviderOllama, URL: srv.URL, Model: embedtest.Model}, ""},
		{"openai", EmbedderConfig{Provider: ProviderOpenAI, URL: srv.URL, Model: embedtest.Model, APIKey: "k"}, ""},
		{"openai url with /v1", EmbedderConfig{Provider: ProviderOpenAI, URL: srv.URL + "/v1/", Model: embedtest.Model}, ""},
		{"openai dimensions checked", EmbedderConfig{Provider: ProviderOpenAI, URL: srv.URL, Model: embedtest.Model, Dimensions: 768}, "gives 32 dimensions; the config says 768"},
		{"unknown model", EmbedderConfig{Provider: ProviderOllama, URL: srv.URL, Model: "nomic-embed-text"}, "404"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			em, err := NewEmbedder(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			vs, err := em.Embed(context.Background(), []string{"we deploy with ArgoCD", "cats"})
			if tc.wantErr != "" {
				if !errors.Is(err, ErrEmbedder) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want ErrEmbedder with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) != 2 || !slices.Equal(vs[0], embedtest.Vector("we deploy with ArgoCD", 32)) || !slices.Equal(vs[1], embedtest.Vector("cats", 32)) {
				t.Fatalf("vectors = %v", vs)
			}
		})
	}
	t.Run("bad config", func(t *testing.T) {
		for _, c := range []EmbedderConfig{{Provider: "mem0", Model: "m"}, {Provider: ProviderOllama}, {Provider: ProviderOpenAI, Model: "m"}} {
			if _, err := NewEmbedder(c); !errors.Is(err, ErrInvalid) {
				t.Errorf("NewEmbedder(%+v) = %v, want ErrInvalid", c, err)
			}
		}
	})
}

func TestSearchByMeaning(t *testing.T) {
	srv := embedtest.Start(t, 32)
	st := openSemantic(t, srv, Options{})
	for _, n := range semanticNotes {
		mustSave(t, st, Memory{Text: n, Author: "alice", Workspace: "w"})
	}
	waitEmbedded(t, st)
	const q = "continuous delivery tool"
	if rs := search(t, st, ModeLexical, q); len(rs) != 0 {
		t.Errorf("lexical %q = %q, want nothing (no word matches)", q, texts(rs))
	}
	for _, mode := range []string{ModeSemantic, ModeHybrid, ""} {
		rs := search(t, st, mode, q)
		if len(rs) == 0 || rs[0].Text != "we deploy with ArgoCD" {
			t.Fatalf("%s %q = %q, want the ArgoCD memory first", mode, q, texts(rs))
		}
		sc := rs[0].Scores
		if sc == nil || sc.SemanticRank != 1 || sc.Semantic < 0.5 || sc.LexicalRank != 0 {
			t.Errorf("%s: scores = %+v, want semantic rank 1, no lexical rank", mode, sc)
		}
		if mode != ModeSemantic && (sc.Fused != 1.0/61 || rs[0].Score != sc.Fused) {
			t.Errorf("%s: fused = %v, score %v, want 1/61", mode, sc.Fused, rs[0].Score)
		}
	}
	// Filters apply to meaning too.
	rs, err := st.Search(context.Background(), Query{Text: q, Mode: ModeSemantic, Filter: Filter{Workspace: "other"}})
	if err != nil || len(rs) != 0 {
		t.Errorf("semantic search of another workspace = %q, %v; want nothing", texts(rs), err)
	}
}

func TestHybridKeepsExactWordsFirst(t *testing.T) {
	srv := embedtest.Start(t, 32)
	st := openSemantic(t, srv, Options{})
	for _, n := range append(semanticNotes,
		"the release train leaves on friday",
		"rollout of the billing service is manual",
		"deploy previews need the vpn",
		"the vault token expires every day") {
		mustSave(t, st, Memory{Text: n})
	}
	waitEmbedded(t, st)
	for _, q := range []string{"vault", "billing", "deploy", "the", "release train", "signing keys"} {
		t.Run(q, func(t *testing.T) {
			lex := search(t, st, ModeLexical, q)
			hyb := search(t, st, ModeHybrid, q)
			// Every lexical hit holds every word here: they come first,
			// in the lexical order, meaning only adds after them.
			if len(hyb) < len(lex) || !slices.Equal(texts(hyb[:len(lex)]), texts(lex)) {
				t.Fatalf("hybrid %q = %q, want it to start with the lexical %q", q, texts(hyb), texts(lex))
			}
			for i, r := range hyb[:len(lex)] {
				if r.Scores == nil || !r.Scores.Every || r.Scores.LexicalRank != i+1 {
					t.Errorf("result %d scores = %+v", i, r.Scores)
				}
			}
		})
	}
}

func TestEmbedderDownAtSave(t *testing.T) {
	srv := embedtest.Start(t, 32)
	srv.SetDown(true)
	st := openSemantic(t, srv, Options{})
	saved := mustSave(t, st, Memory{Text: "we deploy with ArgoCD"}) // as fast as ever: nothing waits for the embedder
	mustSave(t, st, Memory{Text: "cats are the best pets"})
	if _, err := st.Search(context.Background(), Query{Text: "continuous delivery", Mode: ModeSemantic}); !errors.Is(err, ErrEmbedder) {
		t.Fatalf("semantic search with the embedder down: %v, want ErrEmbedder", err)
	}
	// Hybrid falls back to the words.
	if rs := search(t, st, ModeHybrid, "argocd"); len(rs) != 1 || rs[0].ID != saved.ID {
		t.Fatalf("hybrid with the embedder down = %q", texts(rs))
	}
	if n, _ := st.Pending(context.Background()); n != 2 {
		t.Fatalf("pending = %d, want 2", n)
	}
	srv.SetDown(false)
	testutil.Eventually(t, func() error {
		rs, err := st.Search(context.Background(), Query{Text: "continuous delivery tool", Mode: ModeSemantic})
		if err != nil {
			return err
		}
		if len(rs) == 0 || rs[0].ID != saved.ID {
			return fmt.Errorf("semantic search = %q", texts(rs))
		}
		return nil
	})
}

func TestReindexProgress(t *testing.T) {
	srv := embedtest.Start(t, 64)
	st := openSemantic(t, srv, Options{NoBackground: true})
	// More memories than semWindow, so that search goes through the
	// in-memory sign codes.
	const n = 3000
	ms := make([]Memory, 0, n)
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"}
	for i := range n - 1 {
		ms = append(ms, Memory{Text: fmt.Sprintf("note %d about %s and %s", i, words[i%len(words)], words[(i/len(words))%len(words)])})
	}
	ms = append(ms, Memory{Text: "we deploy with ArgoCD", Workspace: "w"})
	if added, _, err := st.ImportMemories(context.Background(), ms); err != nil || added != n {
		t.Fatalf("import: %d, %v", added, err)
	}
	var mu sync.Mutex
	var seen [][2]int
	if err := st.Reindex(context.Background(), func(done, total int) {
		mu.Lock()
		seen = append(seen, [2]int{done, total})
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) < 2 || seen[len(seen)-1] != [2]int{n, n} {
		t.Fatalf("progress = %v…, want it to end at %d/%d", seen[:min(3, len(seen))], n, n)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i][0] < seen[i-1][0] || seen[i][1] != n {
			t.Fatalf("progress goes back or changes its total: %v then %v", seen[i-1], seen[i])
		}
	}
	if got := srv.Texts.Load(); got != n {
		t.Errorf("embedded %d texts, want %d", got, n)
	}
	rs := search(t, st, ModeSemantic, "continuous delivery tool")
	if len(rs) == 0 || rs[0].Text != "we deploy with ArgoCD" {
		t.Fatalf("semantic search over %d = %q", n, texts(rs[:min(3, len(rs))]))
	}
	rs, err := st.Search(context.Background(), Query{Text: "continuous delivery tool", Mode: ModeSemantic, Filter: Filter{Workspace: "w", Scope: ScopeWorkspace, Limit: 1}})
	if err != nil || len(rs) != 1 || rs[0].Text != "we deploy with ArgoCD" {
		t.Fatalf("filtered semantic search = %q, %v", texts(rs), err)
	}
	// Forgetting drops the vector; the index skips it.
	if _, err := st.Forget(context.Background(), rs[0].ID); err != nil {
		t.Fatal(err)
	}
	if rs := search(t, st, ModeSemantic, "continuous delivery tool"); len(rs) > 0 && rs[0].Text == "we deploy with ArgoCD" {
		t.Fatal("a forgotten memory is still found by meaning")
	}
}

func TestModeWithoutEmbedder(t *testing.T) {
	st := openTest(t, nil)
	mustSave(t, st, Memory{Text: "we deploy with ArgoCD"})
	for _, mode := range []string{ModeSemantic, ModeHybrid, "fuzzy"} {
		if _, err := st.Search(context.Background(), Query{Text: "argocd", Mode: mode}); !errors.Is(err, ErrInvalid) {
			t.Errorf("mode %q without an embedder: %v, want ErrInvalid", mode, err)
		}
	}
	rs := search(t, st, "", "argocd")
	if len(rs) != 1 || rs[0].Scores != nil {
		t.Errorf("default search without an embedder = %+v, want lexical", rs)
	}
}

func TestModelChangeReembeds(t *testing.T) {
	srv := embedtest.Start(t, 32)
	path := filepath.Join(t.TempDir(), "memory.db")
	open := func(dims int) *Store {
		em, err := NewEmbedder(EmbedderConfig{Provider: ProviderOpenAI, URL: srv.URL, Model: embedtest.Model, Dimensions: dims})
		if err != nil {
			t.Fatal(err)
		}
		st, err := Open(path, &Options{Embedder: em, NoBackground: true})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open(0)
	mustSave(t, st, Memory{Text: "we deploy with ArgoCD"})
	if err := st.Reindex(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = open(32) // another model name: its vectors are made again
	defer st.Close()
	if n, _ := st.Pending(context.Background()); n != 1 {
		t.Fatalf("pending after a model change = %d, want 1", n)
	}
}

// TestHybridExactWordsBeatFusion: where plain reciprocal rank fusion
// would put a memory found better by meaning above one that ranks first
// on the query's words, the hybrid rule keeps the lexical order among the
// memories holding every word.
func TestHybridExactWordsBeatFusion(t *testing.T) {
	srv := embedtest.Start(t, 32)
	c := newClock()
	st := openSemantic(t, srv, Options{Now: c.Now})
	a := mustSave(t, st, Memory{Text: "release notes are kept in the wiki"})
	c.Advance(time.Second)
	b := mustSave(t, st, Memory{Text: "release rollout and deploy pipelines for continuous delivery with argocd and flux"})
	waitEmbedded(t, st)
	lex := search(t, st, ModeLexical, "release")
	sem := search(t, st, ModeSemantic, "release")
	if len(lex) != 2 || lex[0].ID != a.ID || len(sem) != 2 || sem[0].ID != b.ID {
		t.Fatalf("setup: lexical %q, semantic %q; want the short note first on words, the long one on meaning", texts(lex), texts(sem))
	}
	// Fusion alone ties them (1/61 + 1/62 each) and would give the newer,
	// b; the words decide.
	hyb := search(t, st, ModeHybrid, "release")
	if len(hyb) != 2 || hyb[0].ID != a.ID || hyb[0].Scores.Fused != hyb[1].Scores.Fused {
		t.Fatalf("hybrid = %q with scores %+v, %+v; want the lexical order", texts(hyb), hyb[0].Scores, hyb[1].Scores)
	}
}
