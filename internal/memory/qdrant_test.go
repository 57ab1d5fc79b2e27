package memory

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/embedtest"
	"github.com/relayhq/relay/internal/testing/qdranttest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// openQdrant opens a QdrantStore in a fresh folder with the stand-in
// embedder, on the Qdrant at url, retrying fast; closed with the test.
func openQdrant(t testing.TB, srv *embedtest.Server, url, collection string, opts Options) *QdrantStore {
	t.Helper()
	em, err := NewEmbedder(EmbedderConfig{Provider: ProviderOllama, URL: srv.URL, Model: embedtest.Model})
	if err != nil {
		t.Fatal(err)
	}
	opts.Embedder = em
	if opts.EmbedRetry == 0 {
		opts.EmbedRetry, opts.EmbedRetryMax = 5*time.Millisecond, 40*time.Millisecond
	}
	path := filepath.Join(t.TempDir(), "memory.db")
	st, err := OpenQdrant(path, QdrantConfig{URL: url, Collection: collection}, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// waitSent polls until nothing of st waits to be sent to Qdrant.
func waitSent(t testing.TB, st *QdrantStore) {
	t.Helper()
	testutil.Eventually(t, func() error {
		up, del, err := st.Pending(context.Background())
		if err == nil && up+del > 0 {
			err = fmt.Errorf("%d memories and %d deletions wait for qdrant", up, del)
		}
		return err
	})
}

func ids(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Text
	}
	return out
}

// closedURL is an http URL on which nothing listens.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}

func TestCheckQdrant(t *testing.T) {
	ctx := context.Background()
	stub := qdranttest.Start(t)
	srv := embedtest.Start(t, 32)
	st := openQdrant(t, srv, stub.URL, "check", Options{NoBackground: true})
	if _, _, err := st.Save(ctx, Memory{Text: "we deploy with ArgoCD"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	closed := closedURL(t)
	cases := []struct {
		name    string
		c       QdrantConfig
		dims    int
		want    QdrantReport
		wantErr string
	}{
		{"fine", QdrantConfig{URL: stub.URL, Collection: "check"}, 32, QdrantReport{Version: "1.12.4", Exists: true, Dimensions: 32, Points: 1}, ""},
		{"not made yet", QdrantConfig{URL: stub.URL, Collection: "new"}, 32, QdrantReport{Version: "1.12.4"}, ""},
		{"other dimensions", QdrantConfig{URL: stub.URL, Collection: "check"}, 768, QdrantReport{}, "holds vectors of 32 dimensions; the embedder gives 768"},
		{"unreachable", QdrantConfig{URL: closed, Collection: "check"}, 32, QdrantReport{}, "qdrant at " + closed + " is not reachable"},
		{"not qdrant", QdrantConfig{URL: srv.URL, Collection: "check"}, 32, QdrantReport{}, srv.URL + " does not answer as a Qdrant server (GET /: 404 Not Found)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := CheckQdrant(ctx, c.c, c.dims)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, ErrQdrant) {
					t.Fatalf("err %v, want one with %q", err, c.wantErr)
				}
				return
			}
			if err != nil || r != c.want {
				t.Fatalf("got %+v, %v; want %+v", r, err, c.want)
			}
		})
	}
}

// qdrantBackendChecks is what the Qdrant backend must do, against the
// stand-in or a real server: find by meaning, filter, follow changes.
func qdrantBackendChecks(t *testing.T, url, collection string) {
	ctx := context.Background()
	srv := embedtest.Start(t, 32)
	st := openQdrant(t, srv, url, collection, Options{})
	for _, n := range semanticNotes {
		if _, _, err := st.Save(ctx, Memory{Text: n, Author: "Alice", Workspace: "acme"}); err != nil {
			t.Fatal(err)
		}
	}
	secret, _, err := st.Save(ctx, Memory{Text: "my own deploy checklist", Author: "Alice", Workspace: "acme", Scope: ScopeAgent})
	if err != nil {
		t.Fatal(err)
	}
	waitSent(t, st)

	for _, mode := range []string{ModeSemantic, ModeHybrid} {
		rs := search(t, st, mode, "continuous delivery tool")
		if len(rs) == 0 || rs[0].Text != "we deploy with ArgoCD" || rs[0].Scores == nil || rs[0].Scores.SemanticRank != 1 {
			t.Errorf("%s: %q, want ArgoCD first", mode, ids(rs))
		}
	}
	if rs := search(t, st, ModeLexical, "continuous delivery tool"); len(rs) != 0 {
		t.Errorf("lexical found %q by meaning", ids(rs))
	}
	if rs := search(t, st, ModeLexical, "pnpm"); len(rs) != 1 || rs[0].Snippet != "use [pnpm] for the js packages" {
		t.Errorf("lexical pnpm: %+v", rs)
	}
	// Bob does not see Alice's agent-scoped memory; Alice does.
	bob, err := st.Search(ctx, Query{Text: "deploy", Mode: ModeSemantic, Filter: Filter{Viewer: "Bob", Workspace: "acme"}})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(ids(bob), secret.Text) || len(bob) == 0 {
		t.Errorf("Bob sees %q", ids(bob))
	}
	alice, _ := st.Search(ctx, Query{Text: "deploy", Mode: ModeSemantic, Filter: Filter{Viewer: "Alice", Workspace: "acme"}})
	if !slices.Contains(ids(alice), secret.Text) {
		t.Errorf("Alice misses her own memory: %q", ids(alice))
	}
	if rs, _ := st.Search(ctx, Query{Text: "deploy", Mode: ModeSemantic, Filter: Filter{Workspace: "elsewhere"}}); len(rs) != 0 {
		t.Errorf("another workspace sees %q", ids(rs))
	}

	// Forgotten: never found again, and its point goes.
	argo := search(t, st, ModeSemantic, "ArgoCD")[0]
	if _, err := st.Forget(ctx, argo.ID); err != nil {
		t.Fatal(err)
	}
	if rs := search(t, st, ModeSemantic, "continuous delivery tool"); slices.Contains(ids(rs), argo.Text) {
		t.Errorf("forgotten memory found: %q", ids(rs))
	}
	waitSent(t, st)
	pid, _ := pointID(argo.ID)
	pts, err := st.q.query(ctx, unit(embedtest.Vector("ArgoCD", 32)), nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		if string(p.ID) == fmt.Sprint(pid) {
			t.Errorf("the forgotten memory's point is still in qdrant")
		}
	}
}

func TestQdrantBackend(t *testing.T) {
	stub := qdranttest.Start(t)
	qdrantBackendChecks(t, stub.URL, "relay-test")
	if stub.Calls("PUT /collections/{name}/index") == 0 {
		t.Errorf("no payload index made")
	}
}

// TestQdrantRealServer runs the backend's checks against a real Qdrant:
// set RELAY_TEST_QDRANT_URL (e.g. http://127.0.0.1:6333) to run it. This
// machine cannot run one (no Qdrant in Debian, npm or the Go module
// proxy; no Docker engine), so it skips here.
func TestQdrantRealServer(t *testing.T) {
	url := os.Getenv("RELAY_TEST_QDRANT_URL")
	if url == "" {
		t.Skip("RELAY_TEST_QDRANT_URL is not set: no Qdrant server to test against (none can be installed here; see docs/memory.md)")
	}
	coll := fmt.Sprintf("relay-test-%d", time.Now().UnixNano())
	q, err := newQdrantClient(QdrantConfig{URL: url, Collection: coll})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.deleteCollection(context.Background()) })
	if r, err := CheckQdrant(context.Background(), QdrantConfig{URL: url, Collection: coll}, 32); err != nil || r.Exists {
		t.Fatalf("check before: %+v, %v", r, err)
	}
	qdrantBackendChecks(t, url, coll)
	if r, err := CheckQdrant(context.Background(), QdrantConfig{URL: url, Collection: coll}, 32); err != nil || !r.Exists || r.Dimensions != 32 {
		t.Fatalf("check after: %+v, %v", r, err)
	}
}

// TestQdrantDownAtSave: a save while Qdrant is down is kept in the file
// and sent when Qdrant is back, without a new save; meanwhile hybrid
// search falls back to words and semantic search names the URL.
func TestQdrantDownAtSave(t *testing.T) {
	ctx := context.Background()
	stub := qdranttest.Start(t)
	srv := embedtest.Start(t, 32)
	st := openQdrant(t, srv, stub.URL, "down", Options{})
	stub.SetDown(true)
	m, created, err := st.Save(ctx, Memory{Text: "we deploy with ArgoCD"})
	if err != nil || !created {
		t.Fatalf("save while qdrant is down: %v", err)
	}
	if got, err := st.Get(ctx, m.ID); err != nil || got.Text != m.Text {
		t.Fatalf("get: %+v, %v", got, err)
	}
	if up, _, _ := st.Pending(ctx); up != 1 {
		t.Errorf("pending %d, want 1", up)
	}
	_, err = st.Search(ctx, Query{Text: "continuous delivery tool", Mode: ModeSemantic})
	if err == nil || !strings.Contains(err.Error(), stub.URL) || !errors.Is(err, ErrQdrant) {
		t.Errorf("semantic search with qdrant down: %v, want an error naming %s", err, stub.URL)
	}
	if rs := search(t, st, ModeHybrid, "ArgoCD"); len(rs) != 1 {
		t.Errorf("hybrid with qdrant down: %q, want the lexical hit", ids(rs))
	}
	// Up again: found by meaning with no new save.
	stub.SetDown(false)
	testutil.Eventually(t, func() error {
		rs, err := st.Search(ctx, Query{Text: "continuous delivery tool", Mode: ModeSemantic})
		if err == nil && (len(rs) == 0 || rs[0].ID != m.ID) {
			err = fmt.Errorf("found %q", ids(rs))
		}
		return err
	})
}

// TestQdrantEmbedderDown: the embedder down at save, then up: the memory
// reaches Qdrant without a new save.
func TestQdrantEmbedderDown(t *testing.T) {
	ctx := context.Background()
	stub := qdranttest.Start(t)
	srv := embedtest.Start(t, 32)
	srv.SetDown(true)
	st := openQdrant(t, srv, stub.URL, "emb", Options{})
	m, _, err := st.Save(ctx, Memory{Text: "we deploy with ArgoCD"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Sync(ctx); !errors.Is(err, ErrEmbedder) {
		t.Errorf("sync with the embedder down: %v, want ErrEmbedder", err)
	}
	srv.SetDown(false)
	waitSent(t, st)
	if rs := search(t, st, ModeSemantic, "continuous delivery tool"); len(rs) == 0 || rs[0].ID != m.ID {
		t.Errorf("found %q", ids(rs))
	}
}

// TestQdrantServerLostData: a collection deleted on the server (or a
// server that lost its data) is made again and filled from the file when
// the store is opened next.
func TestQdrantServerLostData(t *testing.T) {
	ctx := context.Background()
	stub := qdranttest.Start(t)
	srv := embedtest.Start(t, 32)
	em, _ := NewEmbedder(EmbedderConfig{Provider: ProviderOllama, URL: srv.URL, Model: embedtest.Model})
	path := filepath.Join(t.TempDir(), "memory.db")
	qc := QdrantConfig{URL: stub.URL, Collection: "lost"}
	st, err := OpenQdrant(path, qc, &Options{Embedder: em, NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range semanticNotes {
		st.Save(ctx, Memory{Text: n})
	}
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if n := stub.Points("lost"); n != len(semanticNotes) {
		t.Fatalf("%d points, want %d", n, len(semanticNotes))
	}
	for _, name := range []string{"drop the collection", "drop one point"} {
		if name == "drop the collection" {
			stub.Drop("lost")
		} else {
			stub.DropOnePoint("lost")
		}
		st, err := OpenQdrant(path, qc, &Options{Embedder: em, NoBackground: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		st.Close()
		if n := stub.Points("lost"); n != len(semanticNotes) {
			t.Errorf("%s: %d points after reopening, want %d", name, n, len(semanticNotes))
		}
	}
}

// TestQdrantRanksAsSQLite: the same memories, the same embedder: the
// Qdrant backend ranks as the SQLite one in every mode (the store is
// small, so the SQLite search is exact).
func TestQdrantRanksAsSQLite(t *testing.T) {
	ctx := context.Background()
	stub := qdranttest.Start(t)
	srv := embedtest.Start(t, 32)
	lite := openSemantic(t, srv, Options{})
	qd := openQdrant(t, srv, stub.URL, "same", Options{})
	notes := append(slices.Clone(semanticNotes), "the deploy pipeline runs pytest first", "release notes go in the wiki",
		"flux was tried before ArgoCD", "cats hate the vault", "our database schema lives in sql files")
	for _, n := range notes {
		for _, st := range []API{lite, qd} {
			if _, _, err := st.Save(ctx, Memory{Text: n, Tags: []string{"x"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitEmbedded(t, lite)
	waitSent(t, qd)
	for _, mode := range []string{ModeLexical, ModeSemantic, ModeHybrid} {
		for _, text := range []string{"continuous delivery tool", "deploy", "ArgoCD", "database keys", "pets in the vault", "pytest deploy"} {
			a, err := lite.Search(ctx, Query{Text: text, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			b, err := qd.Search(ctx, Query{Text: text, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(a), ids(b)) {
				t.Errorf("%s %q:\nsqlite %q\nqdrant %q", mode, text, ids(a), ids(b))
			}
		}
	}
}

func TestQdrantReindex(t *testing.T) {
	ctx := context.Background()
	stub := qdranttest.Start(t)
	srv := embedtest.Start(t, 32)
	st := openQdrant(t, srv, stub.URL, "re", Options{NoBackground: true})
	for i := range 300 {
		st.Save(ctx, Memory{Text: fmt.Sprintf("note %d about deploys", i)})
	}
	var steps []string
	if err := st.Reindex(ctx, func(d, n int) { steps = append(steps, fmt.Sprint(d, "/", n)) }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"256/300", "300/300"}; !slices.Equal(steps, want) {
		t.Errorf("progress %q, want %q", steps, want)
	}
	if n := stub.Points("re"); n != 300 {
		t.Errorf("%d points", n)
	}
	before := srv.Texts.Load()
	if err := st.Reindex(ctx, nil); err != nil || srv.Texts.Load()-before != 300 {
		t.Errorf("second reindex embedded %d texts, err %v", srv.Texts.Load()-before, err)
	}
}

func TestOpenQdrantNeedsEmbedder(t *testing.T) {
	_, err := OpenQdrant(filepath.Join(t.TempDir(), "m.db"), QdrantConfig{URL: "http://127.0.0.1:6333", Collection: "c"}, nil)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "needs an embedder") {
		t.Errorf("err %v", err)
	}
}

// TestQdrantForgetBeforeDelete: a forgotten memory is not found by
// meaning even while its point waits to be deleted.
func TestQdrantForgetBeforeDelete(t *testing.T) {
	ctx := context.Background()
	stub := qdranttest.Start(t)
	srv := embedtest.Start(t, 32)
	st := openQdrant(t, srv, stub.URL, "forget", Options{NoBackground: true})
	m, _, _ := st.Save(ctx, Memory{Text: "we deploy with ArgoCD"})
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Forget(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	if _, del, _ := st.Pending(ctx); del != 1 || stub.Points("forget") != 1 {
		t.Fatalf("%d deletions pending, %d points; want 1 and 1", del, stub.Points("forget"))
	}
	for _, mode := range []string{ModeSemantic, ModeHybrid} {
		if rs := search(t, st, mode, "continuous delivery tool"); len(rs) != 0 {
			t.Errorf("%s found the forgotten memory: %q", mode, ids(rs))
		}
	}
	if err := st.Sync(ctx); err != nil || stub.Points("forget") != 0 {
		t.Errorf("after sync: %d points, err %v", stub.Points("forget"), err)
	}
}

// TestQdrantServed: a QdrantStore served over NATS imports and exports by
// pages of the file, and what is imported reaches Qdrant.
func TestQdrantServed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stub := qdranttest.Start(t)
	srv := embedtest.Start(t, 32)
	st := openQdrant(t, srv, stub.URL, "served", Options{})
	url := startNATS(t)
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, connect(t, url), "q", st) }()
	defer func() { cancel(); <-served }()
	client := NewClient(connect(t, url), "q")
	var lines strings.Builder
	const n = exportPage + 50
	for i := range n {
		fmt.Fprintf(&lines, "{\"text\":\"note %d about deploys\",\"scope\":\"global\"}\n", i)
	}
	testutil.Eventually(t, func() error {
		_, err := client.List(ctx, Filter{Limit: 1})
		return err
	})
	if added, _, err := client.Import(ctx, strings.NewReader(lines.String())); err != nil || added != n {
		t.Fatalf("import: %d, %v", added, err)
	}
	waitSent(t, st)
	if got := stub.Points("served"); got != n {
		t.Errorf("%d points, want %d", got, n)
	}
	var viaWire, direct strings.Builder
	if err := client.Export(ctx, &viaWire); err != nil {
		t.Fatal(err)
	}
	if err := st.Export(ctx, &direct); err != nil {
		t.Fatal(err)
	}
	if viaWire.String() != direct.String() || strings.Count(direct.String(), "\n") != n {
		t.Errorf("export over the wire differs from the file's")
	}
}

// TestQdrantFollowsFileChanges: what changes in the file, by this store or
// another process, reaches Qdrant, though a sync reads only memories
// saved since the last: a re-save, a seq handed out again after a
// deletion, a save by another process.
func TestQdrantFollowsFileChanges(t *testing.T) {
	ctx := context.Background()
	stub := qdranttest.Start(t)
	srv := embedtest.Start(t, 32)
	st := openQdrant(t, srv, stub.URL, "follow", Options{NoBackground: true})
	other, err := Open(st.Local().Path(), nil) // another process's view of the file
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	sync := func(wantPoints int) {
		t.Helper()
		if err := st.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if up, del, _ := st.Pending(ctx); up+del != 0 {
			t.Fatalf("after sync: %d memories and %d deletions wait", up, del)
		}
		if n := stub.Points("follow"); n != wantPoints {
			t.Fatalf("%d points, want %d", n, wantPoints)
		}
	}
	a, _, _ := st.Save(ctx, Memory{Text: "we deploy with ArgoCD"})
	b, _, _ := st.Save(ctx, Memory{Text: "use pnpm for packages"})
	sync(2)
	// The newest memory forgotten, then a new one: it may get its seq.
	if _, err := st.Forget(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	st.Save(ctx, Memory{Text: "postgres holds the schema"})
	sync(2)
	// Re-saved with a new tag: the payload follows.
	st.Save(ctx, Memory{Text: a.Text, Tags: []string{"ops"}})
	sync(2)
	rs, err := st.Search(ctx, Query{Text: "continuous delivery", Mode: ModeSemantic, Filter: Filter{Tags: []string{"ops"}}})
	if err != nil || len(rs) != 1 || rs[0].ID != a.ID {
		t.Fatalf("search by the new tag: %q, %v", ids(rs), err)
	}
	// Saved and forgotten by another process.
	other.Save(ctx, Memory{Text: "cats are the best pets"})
	sync(3)
	other.Forget(ctx, a.ID)
	sync(2)
}
