package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/memory"
	"github.com/relayhq/relay/internal/testing/embedtest"
	"github.com/relayhq/relay/internal/testing/qdranttest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// withQdrant writes a user configuration with srv as the embedder and
// backend = "qdrant" on qd's collection "team".
func (c *memCLI) withQdrant(srv *embedtest.Server, qd *qdranttest.Server) {
	c.t.Helper()
	p := filepath.Join(c.vars["HOME"], ".config", "relay", "config.toml")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		c.t.Fatal(err)
	}
	toml := fmt.Sprintf(`[memory]
backend = "qdrant"
[memory.embedder]
provider = "ollama"
url = %q
model = %q
[memory.qdrant]
url = %q
collection = "team"
api_key_env = "QDRANT_KEY"
`, srv.URL, embedtest.Model, qd.URL)
	if err := os.WriteFile(p, []byte(toml), 0o600); err != nil {
		c.t.Fatal(err)
	}
	c.vars["QDRANT_KEY"] = "secret"
}

// TestMemoryCLIQdrant: with backend = "qdrant" and no hub, the CLI keeps
// the memory in the file and sends it to Qdrant at once; Qdrant down, the
// save still succeeds and says the memory waits; reindex sends all.
func TestMemoryCLIQdrant(t *testing.T) {
	srv := embedtest.Start(t, 32)
	qd := qdranttest.StartWithKey(t, "secret")
	c := newMemCLI(t)
	c.withQdrant(srv, qd)

	c.must("", "save", "we", "deploy", "with", "ArgoCD")
	if n := qd.Points("team"); n != 1 {
		t.Fatalf("%d points in qdrant after a direct save, want 1", n)
	}
	out, _ := c.must("", "search", "--json", "--mode", "semantic", "continuous delivery tool")
	var rs []memory.Result
	if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 1 || rs[0].Text != "we deploy with ArgoCD" {
		t.Fatalf("semantic search = %s (%v)", out, err)
	}
	if out, _ := c.must("", "search", "--mode", "lexical", "continuous delivery tool"); out != "" {
		t.Errorf("lexical search printed %q", out)
	}

	qd.SetDown(true)
	out, errs := c.must("", "save", "use", "pnpm", "for", "packages")
	if !strings.HasPrefix(out, "memory saved as [") || !strings.Contains(errs, "but not yet sent to qdrant") || !strings.Contains(errs, qd.URL) {
		t.Errorf("save with qdrant down: %q, stderr %q", out, errs)
	}
	if code, _, errs := c.run("", "search", "--mode", "semantic", "npm"); code == 0 || !strings.Contains(errs, qd.URL) {
		t.Errorf("semantic search with qdrant down: exit %d, stderr %q; want a failure naming %s", code, errs, qd.URL)
	}
	if out, _ := c.must("", "search", "pnpm"); !strings.Contains(out, "pnpm") {
		t.Errorf("hybrid search with qdrant down lost the lexical hit: %q", out)
	}
	qd.SetDown(false)
	out, errs = c.must("", "reindex")
	if !strings.HasPrefix(out, "reindexed 2 memories with "+embedtest.Model) || !strings.Contains(errs, "reindexed 2 of 2") {
		t.Errorf("reindex: %q, stderr %q", out, errs)
	}
	if n := qd.Points("team"); n != 2 {
		t.Errorf("%d points after reindex, want 2", n)
	}
}

// TestHubServesQdrantMemory: the hub serves the Qdrant backend: what an
// agent saves through the service reaches Qdrant in the background and is
// found by meaning.
func TestHubServesQdrantMemory(t *testing.T) {
	srv := embedtest.Start(t, 32)
	qd := qdranttest.StartWithKey(t, "secret")
	c := newMemCLI(t)
	c.withQdrant(srv, qd)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h, err := hub.Start(ctx, hub.Options{Home: c.home, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	env := &Env{Getenv: func(k string) string { return c.vars[k] }}
	stop, err := serveMemory(ctx, env, h, c.home, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	ep := h.Endpoint()
	nc, err := bus.Dial(ctx, bus.Options{URL: ep.URL, Token: ep.Token}, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	api := memory.NewClient(nc, memory.DefaultSubjectPrefix)
	if reply, err := memory.Handle(ctx, api, "alice", "default", "save", "we deploy with ArgoCD"); err != nil {
		t.Fatal(reply, err)
	}
	testutil.Eventually(t, func() error {
		if n := qd.Points("team"); n != 1 {
			return fmt.Errorf("%d points in qdrant", n)
		}
		return nil
	})
	reply, err := memory.Handle(ctx, api, "bob", "default", "search", "continuous delivery tool")
	if err != nil || !strings.Contains(reply, "we deploy with ArgoCD") {
		t.Errorf("@memory:search = %q, %v", reply, err)
	}
}
