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
	"github.com/relayhq/relay/internal/testing/testutil"
)

// withEmbedder writes a user configuration naming srv as the embedder.
func (c *memCLI) withEmbedder(srv *embedtest.Server) {
	c.t.Helper()
	p := filepath.Join(c.vars["HOME"], ".config", "relay", "config.toml")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		c.t.Fatal(err)
	}
	toml := fmt.Sprintf("[memory.embedder]\nprovider = \"openai\"\nurl = %q\nmodel = %q\napi_key_env = \"EMBED_KEY\"\n", srv.URL, embedtest.Model)
	if err := os.WriteFile(p, []byte(toml), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

func TestMemoryCLISemantic(t *testing.T) {
	srv := embedtest.Start(t, 32)
	c := newMemCLI(t)
	if code, _, errs := c.run("", "reindex"); code != ExitUsage || !strings.Contains(errs, "reindex needs an embedder") {
		t.Fatalf("reindex without an embedder: exit %d, %q", code, errs)
	}
	c.withEmbedder(srv)

	// Imported memories wait for their vectors; reindex makes them all.
	const n = 300
	var lines strings.Builder
	for i := range n {
		fmt.Fprintf(&lines, "{\"text\":\"note %d about the weather\",\"scope\":\"global\"}\n", i)
	}
	c.must(lines.String(), "import", "-")
	out, errs := c.must("", "reindex")
	if !strings.HasPrefix(out, fmt.Sprintf("reindexed %d memories with %s in ", n, embedtest.Model)) {
		t.Errorf("reindex printed %q", out)
	}
	if !strings.HasSuffix(errs, fmt.Sprintf("relay memory: reindexed %d of %d\n", n, n)) || !strings.Contains(errs, "relay memory: reindexed ") {
		t.Errorf("reindex progress = %q", errs)
	}

	// A direct save embeds at once (no hub does it).
	c.must("", "save", "we", "deploy", "with", "ArgoCD")
	const q = "continuous delivery tool"
	if out, _ := c.must("", "search", "--mode", "lexical", q); out != "" {
		t.Errorf("lexical search printed %q, want nothing", out)
	}
	for _, mode := range []string{"semantic", "hybrid", ""} {
		args := []string{"search", "--json", q}
		if mode != "" {
			args = append(args, "--mode", mode)
		}
		out, _ := c.must("", args...)
		var rs []memory.Result
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			t.Fatalf("%s: %v in %s", mode, err, out)
		}
		if len(rs) == 0 || rs[0].Text != "we deploy with ArgoCD" || rs[0].Scores == nil || rs[0].Scores.SemanticRank != 1 {
			t.Fatalf("search --mode %q = %s", mode, out)
		}
		if !strings.Contains(out, `"semantic_rank": 1`) || !strings.Contains(out, `"lexical_rank": 0`) {
			t.Errorf("--json lacks the scores: %s", out)
		}
	}
	if code, _, errs := c.run("", "search", "--mode", "fuzzy", "x"); code != ExitUsage || !strings.Contains(errs, "want lexical, semantic or hybrid") {
		t.Errorf("--mode fuzzy: exit %d, %q", code, errs)
	}
}

// TestHubServesSemanticMemory: the hub's store takes [memory.embedder]
// from the configuration, embeds in the background what agents save
// through the service, and searches by meaning on request.
func TestHubServesSemanticMemory(t *testing.T) {
	srv := embedtest.Start(t, 32)
	c := newMemCLI(t)
	c.withEmbedder(srv)
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
	reply, err := memory.Handle(ctx, api, "alice", "default", "save", "we deploy with ArgoCD")
	if err != nil {
		t.Fatal(reply, err)
	}
	testutil.Eventually(t, func() error {
		rs, err := api.Search(ctx, memory.Query{Text: "continuous delivery tool", Mode: memory.ModeSemantic})
		if err != nil {
			return err
		}
		if len(rs) == 0 || rs[0].Text != "we deploy with ArgoCD" {
			return fmt.Errorf("semantic search = %+v", rs)
		}
		return nil
	})
	// @memory:search is hybrid by default with an embedder.
	reply, err = memory.Handle(ctx, api, "bob", "default", "search", "continuous delivery tool")
	if err != nil || !strings.Contains(reply, "we deploy with ArgoCD") {
		t.Errorf("@memory:search = %q, %v", reply, err)
	}
}
