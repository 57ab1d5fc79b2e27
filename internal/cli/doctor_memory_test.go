package cli

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/testing/embedtest"
)

func TestDoctorEmbedder(t *testing.T) {
	srv := embedtest.Start(t, 32)
	down := embedtest.Start(t, 32)
	down.SetDown(true)
	gone := "http://127.0.0.1:1" // nothing listens on port 1
	emb := func(provider, url, model string, dims int, keyEnv string) config.Memory {
		return config.Memory{Backend: config.BackendSQLite, Embedder: config.Embedder{Provider: provider, URL: url, Model: model, Dimensions: dims, APIKeyEnv: keyEnv}}
	}
	tests := []struct {
		name         string
		mc           config.Memory
		ok           bool
		detail, fix  string
		wantNoChecks bool
	}{
		{"no embedder", config.Memory{Backend: config.BackendSQLite}, true, "", "", true},
		{"ollama ok", emb("ollama", srv.URL, embedtest.Model, 0, ""), true, "ollama concept-embed at " + srv.URL + ": 32 dimensions", "", false},
		{"openai ok", emb("openai", srv.URL, embedtest.Model, 32, "KEY"), true, "openai concept-embed at " + srv.URL + ": 32 dimensions", "", false},
		{"unreachable", emb("ollama", gone, "nomic-embed-text", 0, ""), false, "is not reachable", "start it (`ollama serve`)", false},
		{"no such model", emb("ollama", srv.URL, "nomic-embed-text", 0, ""), false, `has no model "nomic-embed-text"`, "`ollama pull nomic-embed-text`", false},
		{"dimensions", emb("openai", srv.URL, embedtest.Model, 768, ""), false, "gives 32 dimensions; the config says 768", "set [memory.embedder] dimensions = 32, or use a model that gives 768", false},
		{"key variable empty", emb("openai", srv.URL, embedtest.Model, 0, "NOKEY"), false, "$NOKEY (api_key_env) is empty", "export NOKEY=…", false},
		{"service failing", emb("openai", down.URL, embedtest.Model, 0, ""), false, "503 Service Unavailable", "check [memory.embedder]", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, _, _ := doctorEnv(t.TempDir(), map[string]string{"KEY": "secret"})
			cs := checkMemoryStore(context.Background(), env, tc.mc)
			if tc.wantNoChecks {
				if len(cs) != 0 {
					t.Fatalf("checks = %+v, want none", cs)
				}
				return
			}
			if len(cs) != 1 {
				t.Fatalf("checks = %+v, want one", cs)
			}
			c := cs[0]
			if c.OK != tc.ok || !strings.Contains(c.Detail, tc.detail) || !strings.Contains(c.Fix, tc.fix) {
				t.Errorf("check = %+v\nwant ok %v, detail with %q, fix with %q", c, tc.ok, tc.detail, tc.fix)
			}
		})
	}
}

// qdrantReplies serves Qdrant's replies as its API reference gives them
// (internal/memory/testdata/qdrant): a server whose collection "team" holds 768
// dimensions and whose collection "new" does not exist.
func qdrantReplies(t *testing.T) string {
	dir := filepath.Join("..", "memory", "testdata", "qdrant")
	files := map[string]string{"/": "root.json", "/collections/team": "collection.json", "/collections/new": "collection_missing.json"}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := files[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Error(err)
		}
		if strings.Contains(f, "missing") {
			w.WriteHeader(http.StatusNotFound)
		}
		w.Write(data)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestDoctorQdrant(t *testing.T) {
	emb768 := embedtest.Start(t, 768)
	emb32 := embedtest.Start(t, 32)
	qd := qdrantReplies(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	mem := func(emb *embedtest.Server, url, coll, keyEnv string) config.Memory {
		return config.Memory{Backend: config.BackendQdrant,
			Embedder: config.Embedder{Provider: "ollama", URL: emb.URL, Model: embedtest.Model},
			Qdrant:   config.Qdrant{URL: url, Collection: coll, APIKeyEnv: keyEnv}}
	}
	tests := []struct {
		name        string
		mc          config.Memory
		ok          bool
		detail, fix string
	}{
		{"fine", mem(emb768, qd, "team", "KEY"), true, "qdrant 1.12.4 at " + qd + ": collection team, 768 dimensions, 3 points", ""},
		{"collection not made yet", mem(emb32, qd, "new", ""), true, "collection new is made with the first memory", ""},
		{"unreachable", mem(emb768, closed, "team", ""), false, "collection team: qdrant failed: qdrant at " + closed + " is not reachable: ",
			"start Qdrant, or correct [memory.qdrant] url"},
		{"not qdrant", mem(emb768, emb768.URL, "team", ""), false, emb768.URL + " does not answer as a Qdrant server (GET /: 404 Not Found)", "start Qdrant, or correct [memory.qdrant] url"},
		{"other dimensions", mem(emb32, qd, "team", ""), false, "holds vectors of 768 dimensions; the embedder gives 32",
			"name another collection in [memory.qdrant] collection (relay makes it), or delete collection team"},
		{"key variable empty", mem(emb768, qd, "team", "NOKEY"), false, "$NOKEY (api_key_env) is empty", "export NOKEY=…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, _, _ := doctorEnv(t.TempDir(), map[string]string{"KEY": "secret"})
			cs := checkMemoryStore(context.Background(), env, tc.mc)
			if len(cs) != 2 || !cs[0].OK || cs[0].Name != "embedder" {
				t.Fatalf("checks = %+v, want the embedder's (ok) and qdrant's", cs)
			}
			c := cs[1]
			if c.Name != "memory store" || c.OK != tc.ok || !strings.Contains(c.Detail, tc.detail) || !strings.Contains(c.Fix, tc.fix) {
				t.Errorf("check = %+v\nwant ok %v, detail with %q, fix with %q", c, tc.ok, tc.detail, tc.fix)
			}
		})
	}
}
