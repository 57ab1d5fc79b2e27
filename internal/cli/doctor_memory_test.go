package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/relayhq/relay/config"
	"github.com/relayhq/relay/internal/embedtest"
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
		{"qdrant", config.Memory{Backend: config.BackendQdrant}, false, "no Qdrant client yet", `backend = "sqlite"`, false},
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
