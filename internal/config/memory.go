package config

import (
	"github.com/relayhq/relay/internal/lazyre"
	"net/url"
)

// Memory backends ([memory] backend).
const (
	BackendSQLite = "sqlite" // the SQLite file in RELAY_HOME (the default)
	BackendQdrant = "qdrant" // a Qdrant server ([memory.qdrant])
)

// Embedder is [memory.embedder]: the service that turns memories into
// vectors for search by meaning. Provider "" means none: memory is lexical.
type Embedder struct {
	// Provider is "ollama" (POST URL/api/embed) or "openai" (POST
	// URL/v1/embeddings, which llama.cpp, vLLM, LM Studio and hosted
	// services speak).
	Provider string
	// URL is the service's base URL; empty means Ollama's default,
	// http://127.0.0.1:11434.
	URL string
	// Model is the embedding model, e.g. nomic-embed-text.
	Model string
	// Dimensions, when not zero, is the vector length asked for and
	// checked.
	Dimensions int
	// APIKeyEnv names the environment variable holding the API key (never
	// the key itself: config files are shared).
	APIKeyEnv string
}

// Qdrant is [memory.qdrant]: the server of backend = "qdrant".
type Qdrant struct {
	URL        string // e.g. http://127.0.0.1:6333
	Collection string // default "relay-memory"
	// APIKeyEnv names the environment variable holding Qdrant's API key,
	// sent in its api-key header (never the key itself).
	APIKeyEnv string
}

// DefaultQdrantCollection is [memory.qdrant] collection's default.
const DefaultQdrantCollection = "relay-memory"

type fileEmbedder struct {
	Provider   *string `toml:"provider"`
	URL        *string `toml:"url"`
	Model      *string `toml:"model"`
	Dimensions *int64  `toml:"dimensions"`
	APIKeyEnv  *string `toml:"api_key_env"`
}

type fileQdrant struct {
	URL        *string `toml:"url"`
	Collection *string `toml:"collection"`
	APIKeyEnv  *string `toml:"api_key_env"`
}

var (
	envNameRE    = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
	collectionRE = shape{lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`), 255}
)

// memoryStore applies [memory] backend, [memory.embedder] and
// [memory.qdrant].
func (a *applier) memoryStore(m *fileMemory) {
	if m.Backend != nil {
		switch *m.Backend {
		case BackendSQLite, BackendQdrant:
			a.c.Memory.Backend = *m.Backend
			a.set("memory.backend")
		default:
			a.fail("memory.backend", "%q is not a memory backend%s", *m.Backend,
				hint(*m.Backend, []string{BackendSQLite, BackendQdrant}, "sqlite or qdrant; a Go program sets its own with relay.Options.Memory"))
		}
	}
	if e := m.Embedder; e != nil {
		dst := &a.c.Memory.Embedder
		if e.Provider != nil {
			switch *e.Provider {
			case "ollama", "openai":
				dst.Provider = *e.Provider
				a.set("memory.embedder.provider")
			default:
				a.fail("memory.embedder.provider", "%q is not an embedder provider%s", *e.Provider,
					hint(*e.Provider, []string{"ollama", "openai"}, "ollama or openai (any OpenAI-compatible /v1/embeddings)"))
			}
		}
		a.httpURL("memory.embedder.url", e.URL, &dst.URL)
		if e.Model != nil {
			if *e.Model == "" {
				a.fail("memory.embedder.model", "the model is empty (e.g. nomic-embed-text)")
			} else {
				dst.Model = *e.Model
				a.set("memory.embedder.model")
			}
		}
		a.integer("memory.embedder.dimensions", e.Dimensions, 1, 65536, &dst.Dimensions)
		a.envName("memory.embedder.api_key_env", e.APIKeyEnv, &dst.APIKeyEnv)
	}
	if q := m.Qdrant; q != nil {
		a.httpURL("memory.qdrant.url", q.URL, &a.c.Memory.Qdrant.URL)
		if q.Collection != nil {
			if collectionRE.MatchString(*q.Collection) {
				a.c.Memory.Qdrant.Collection = *q.Collection
				a.set("memory.qdrant.collection")
			} else {
				a.fail("memory.qdrant.collection", "%q is not a collection name (letters, digits, '_', '-', '.')", *q.Collection)
			}
		}
		a.envName("memory.qdrant.api_key_env", q.APIKeyEnv, &a.c.Memory.Qdrant.APIKeyEnv)
	}
}

// envName applies a key that names an environment variable.
func (a *applier) envName(key string, v *string, dst *string) {
	if v == nil {
		return
	}
	if !envNameRE().MatchString(*v) {
		a.fail(key, "%q is not an environment variable name: give the variable's name, never the key", *v)
		return
	}
	*dst = *v
	a.set(key)
}

func (a *applier) httpURL(key string, v *string, dst *string) {
	if v == nil {
		return
	}
	u, err := url.Parse(*v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		a.fail(key, "%q is not an http:// or https:// URL", *v)
		return
	}
	*dst = *v
	a.set(key)
}

// checkMemory checks what only the merged configuration shows.
func (c *Config) checkMemory() Errors {
	var errs Errors
	at := func(key, msg string) {
		s := c.sources[key]
		errs = append(errs, &Error{File: s.File, Line: s.Line, Col: s.Col, Key: key, Msg: msg})
	}
	e := c.Memory.Embedder
	if e.Provider == "" && (e.URL != "" || e.Model != "" || e.Dimensions != 0 || e.APIKeyEnv != "") {
		key := "memory.embedder.model"
		if e.Model == "" {
			key = "memory.embedder.url"
		}
		at(key, `[memory.embedder] needs a provider ("ollama" or "openai")`)
	}
	if e.Provider != "" && e.Model == "" {
		at("memory.embedder.provider", "[memory.embedder] needs a model (e.g. nomic-embed-text)")
	}
	if e.Provider == "openai" && e.URL == "" {
		at("memory.embedder.provider", `the openai provider needs a url (e.g. "http://127.0.0.1:8080" for llama.cpp)`)
	}
	if c.Memory.Backend == BackendQdrant && c.Memory.Qdrant.URL == "" {
		at("memory.backend", `backend = "qdrant" needs [memory.qdrant] url`)
	}
	if c.Memory.Backend == BackendQdrant && e.Provider == "" {
		at("memory.backend", `backend = "qdrant" needs [memory.embedder] (Qdrant keeps the vectors it makes)`)
	}
	return errs
}
