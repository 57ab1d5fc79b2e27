package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/config"
)

func TestMemoryStoreConfig(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{".relay/config.toml": `
[memory]
backend = "qdrant"
[memory.embedder]
provider = "openai"
url = "http://127.0.0.1:8080/v1"
model = "nomic-embed-text"
dimensions = 768
api_key_env = "EMBED_KEY"
[memory.qdrant]
url = "http://127.0.0.1:6333"
collection = "team"
api_key_env = "QDRANT_KEY"
`})
	c, err := config.Load(config.Sources{ProjectDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := config.Memory{Backend: "qdrant",
		Embedder: config.Embedder{Provider: "openai", URL: "http://127.0.0.1:8080/v1", Model: "nomic-embed-text", Dimensions: 768, APIKeyEnv: "EMBED_KEY"},
		Qdrant:   config.Qdrant{URL: "http://127.0.0.1:6333", Collection: "team", APIKeyEnv: "QDRANT_KEY"}}
	if c.Memory != want {
		t.Errorf("memory = %+v\nwant     %+v", c.Memory, want)
	}
	d := config.Default()
	if d.Memory.Backend != config.BackendSQLite || d.Memory.Embedder.Provider != "" {
		t.Errorf("default memory = %+v, want sqlite without an embedder", d.Memory)
	}
}

func TestMemoryStoreConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, toml, want string }{
		{"backend", "[memory]\nbackend = 'qdrnt'", `DIR/.relay/config.toml:2:1: memory.backend: "qdrnt" is not a memory backend (did you mean "qdrant"?)`},
		{"seed's mem0", "[memory]\nbackend = 'mem0'", `DIR/.relay/config.toml:2:1: memory.backend: "mem0" is not a memory backend (want sqlite or qdrant; a Go program sets its own with relay.Options.Memory)`},
		{"provider", "[memory.embedder]\nprovider = 'olama'\nmodel = 'm'", `DIR/.relay/config.toml:2:1: memory.embedder.provider: "olama" is not an embedder provider (did you mean "ollama"?)`},
		{"unknown key", "[memory.embedder]\nprovider = 'ollama'\nmodle = 'm'", `DIR/.relay/config.toml:3:1: memory.embedder.modle: unknown key (did you mean "model"?)`},
		{"url", "[memory.embedder]\nprovider = 'ollama'\nmodel = 'm'\nurl = 'localhost:11434'", `DIR/.relay/config.toml:4:1: memory.embedder.url: "localhost:11434" is not an http:// or https:// URL`},
		{"no model", "[memory.embedder]\nprovider = 'ollama'", `DIR/.relay/config.toml:2:1: memory.embedder.provider: [memory.embedder] needs a model (e.g. nomic-embed-text)`},
		{"no provider", "[memory.embedder]\nmodel = 'nomic-embed-text'", `DIR/.relay/config.toml:2:1: memory.embedder.model: [memory.embedder] needs a provider ("ollama" or "openai")`},
		{"openai without url", "[memory.embedder]\nprovider = 'openai'\nmodel = 'm'", `DIR/.relay/config.toml:2:1: memory.embedder.provider: the openai provider needs a url (e.g. "http://127.0.0.1:8080" for llama.cpp)`},
		{"a key, not its name", "[memory.embedder]\nprovider = 'ollama'\nmodel = 'm'\napi_key_env = 'sk-abc123!'", `DIR/.relay/config.toml:4:1: memory.embedder.api_key_env: "sk-abc123!" is not an environment variable name: give the variable's name, never the key`},
		{"dimensions", "[memory.embedder]\nprovider = 'ollama'\nmodel = 'm'\ndimensions = 0", `DIR/.relay/config.toml:4:1: memory.embedder.dimensions: 0 is out of range (want 1 to 65536)`},
		{"qdrant without url", "[memory]\nbackend = 'qdrant'\n[memory.embedder]\nprovider = 'ollama'\nmodel = 'm'", `DIR/.relay/config.toml:2:1: memory.backend: backend = "qdrant" needs [memory.qdrant] url`},
		{"qdrant without embedder", "[memory]\nbackend = 'qdrant'\n[memory.qdrant]\nurl = 'http://127.0.0.1:6333'", `DIR/.relay/config.toml:2:1: memory.backend: backend = "qdrant" needs [memory.embedder] (Qdrant keeps the vectors it makes)`},
		{"qdrant key typo", "[memory.qdrant]\nurl = 'http://127.0.0.1:6333'\ncolection = 'x'", `DIR/.relay/config.toml:3:1: memory.qdrant.colection: unknown key (did you mean "collection"?)`},
		{"qdrant api key typo", "[memory.qdrant]\nurl = 'http://127.0.0.1:6333'\napi_key_enf = 'K'", `DIR/.relay/config.toml:3:1: memory.qdrant.api_key_enf: unknown key (did you mean "api_key_env"?)`},
		{"qdrant key, not its name", "[memory.qdrant]\nurl = 'http://127.0.0.1:6333'\napi_key_env = 'abc-123'", `DIR/.relay/config.toml:3:1: memory.qdrant.api_key_env: "abc-123" is not an environment variable name: give the variable's name, never the key`},
		{"qdrant url", "[memory.qdrant]\nurl = '127.0.0.1:6333'", `DIR/.relay/config.toml:2:1: memory.qdrant.url: "127.0.0.1:6333" is not an http:// or https:// URL`},
		{"qdrant collection", "[memory.qdrant]\nurl = 'http://127.0.0.1:6333'\ncollection = 'a b'", `DIR/.relay/config.toml:3:1: memory.qdrant.collection: "a b" is not a collection name (letters, digits, '_', '-', '.')`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, map[string]string{".relay/config.toml": tt.toml})
			_, err := config.Load(config.Sources{ProjectDir: dir})
			if err == nil {
				t.Fatal("no error")
			}
			if got := strings.ReplaceAll(err.Error(), dir, "DIR"); got != filepath.FromSlash(tt.want) {
				t.Errorf("error:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
