package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Embedder turns texts into vectors whose closeness means closeness of
// meaning. A Store given one (Options.Embedder) keeps a vector beside each
// memory and can search by meaning; see docs/memory.md.
type Embedder interface {
	// Embed returns one vector per text, in order, all of the same length.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the model: vectors made by another model are never
	// compared with this one's (they are made again).
	Model() string
}

// ErrEmbedder means the embedder failed: unreachable, an unknown model, a
// bad reply. The error that wraps it says which.
var ErrEmbedder = errors.New("embedder failed")

// Embedder providers.
const (
	ProviderOllama = "ollama" // POST URL/api/embed
	ProviderOpenAI = "openai" // POST URL/v1/embeddings (llama.cpp, vLLM, LM Studio, hosted services)
)

// EmbedderConfig says which embedding service to use.
type EmbedderConfig struct {
	// Provider is ProviderOllama or ProviderOpenAI.
	Provider string
	// URL is the service's base URL; empty means http://127.0.0.1:11434
	// for Ollama. For OpenAI-compatible services a URL that already ends
	// in /v1 is fine.
	URL string
	// Model is the embedding model, e.g. nomic-embed-text.
	Model string
	// Dimensions, when not zero, is asked of services that can shorten
	// their vectors (OpenAI's dimensions) and checked on every reply.
	Dimensions int
	// APIKey is sent as a bearer token when set.
	APIKey string
	// Timeout bounds one request; zero means 30 s.
	Timeout time.Duration
}

// NewEmbedder returns the HTTP embedder c describes.
func NewEmbedder(c EmbedderConfig) (Embedder, error) {
	switch c.Provider {
	case ProviderOllama:
		if c.URL == "" {
			c.URL = "http://127.0.0.1:11434"
		}
	case ProviderOpenAI:
		if c.URL == "" {
			return nil, fmt.Errorf("%w: the openai embedder needs a url", ErrInvalid)
		}
	default:
		return nil, fmt.Errorf("%w: unknown embedder provider %q (want ollama or openai)", ErrInvalid, c.Provider)
	}
	if c.Model == "" {
		return nil, fmt.Errorf("%w: the embedder needs a model", ErrInvalid)
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	c.URL = strings.TrimRight(c.URL, "/")
	return &httpEmbedder{c: c, client: &http.Client{Timeout: c.Timeout}}, nil
}

type httpEmbedder struct {
	c      EmbedderConfig
	client *http.Client
}

func (e *httpEmbedder) Model() string {
	if e.c.Dimensions > 0 {
		return fmt.Sprintf("%s/%s@%d", e.c.Provider, e.c.Model, e.c.Dimensions)
	}
	return e.c.Provider + "/" + e.c.Model
}

// endpoint is the URL of the embeddings call.
func (e *httpEmbedder) endpoint() string {
	if e.c.Provider == ProviderOllama {
		return e.c.URL + "/api/embed"
	}
	if strings.HasSuffix(e.c.URL, "/v1") {
		return e.c.URL + "/embeddings"
	}
	return e.c.URL + "/v1/embeddings"
}

func (e *httpEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	req := map[string]any{"model": e.c.Model, "input": texts}
	if e.c.Dimensions > 0 && e.c.Provider == ProviderOpenAI {
		req["dimensions"] = e.c.Dimensions
	}
	var rep struct {
		Embeddings [][]float32 `json:"embeddings"` // ollama
		Data       []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"` // openai
	}
	if err := e.post(ctx, e.endpoint(), req, &rep); err != nil {
		return nil, err
	}
	out := rep.Embeddings
	if e.c.Provider == ProviderOpenAI {
		out = make([][]float32, len(rep.Data))
		for _, d := range rep.Data {
			if d.Index < 0 || d.Index >= len(out) {
				return nil, fmt.Errorf("%w: %s: reply index %d out of range", ErrEmbedder, e.endpoint(), d.Index)
			}
			out[d.Index] = d.Embedding
		}
		if len(rep.Data) == 1 {
			out[0] = rep.Data[0].Embedding
		}
	}
	if len(out) != len(texts) {
		return nil, fmt.Errorf("%w: %s: %d vectors for %d texts", ErrEmbedder, e.endpoint(), len(out), len(texts))
	}
	for _, v := range out {
		switch {
		case len(v) == 0:
			return nil, fmt.Errorf("%w: %s: an empty vector", ErrEmbedder, e.endpoint())
		case e.c.Dimensions > 0 && len(v) != e.c.Dimensions:
			return nil, fmt.Errorf("%w: %s: model %s gives %d dimensions; the config says %d", ErrEmbedder, e.endpoint(), e.c.Model, len(v), e.c.Dimensions)
		case len(v) != len(out[0]):
			return nil, fmt.Errorf("%w: %s: vectors of different lengths", ErrEmbedder, e.endpoint())
		}
	}
	return out, nil
}

func (e *httpEmbedder) post(ctx context.Context, url string, body, into any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrEmbedder, err)
	}
	req.Header.Set("Content-Type", "application/json")
	return e.do(req, into)
}

func (e *httpEmbedder) do(req *http.Request, into any) error {
	if e.c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.c.APIKey)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrEmbedder, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrEmbedder, req.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(data))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return fmt.Errorf("%w: %s: %s: %s", ErrEmbedder, req.URL, resp.Status, msg)
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%w: %s: bad reply: %v", ErrEmbedder, req.URL, err)
	}
	return nil
}

// EmbedderReport is what CheckEmbedder found.
type EmbedderReport struct {
	// ModelListed is true when the service lists the model; ModelChecked
	// false when it lists no models (then only the embedding call tells).
	ModelListed, ModelChecked bool
	Dimensions                int           // of a test vector
	Took                      time.Duration // one embedding of a short text
}

// CheckEmbedder asks the service of c whether it runs, has the model, and
// gives vectors of the configured dimensions. The error says what is wrong
// and how to fix it.
func CheckEmbedder(ctx context.Context, c EmbedderConfig) (EmbedderReport, error) {
	var r EmbedderReport
	em, err := NewEmbedder(c)
	if err != nil {
		return r, err
	}
	e := em.(*httpEmbedder)
	// The model list: Ollama's /api/tags, OpenAI's /v1/models.
	listURL := e.c.URL + "/api/tags"
	if e.c.Provider == ProviderOpenAI {
		listURL = strings.TrimSuffix(e.c.URL, "/v1") + "/v1/models"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, listURL, nil)
	if err != nil {
		return r, err
	}
	var models struct {
		Models []struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"` // ollama
		Data []struct {
			ID string `json:"id"`
		} `json:"data"` // openai
	}
	if err := e.do(req, &models); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || strings.Contains(err.Error(), "connect") {
			return r, fmt.Errorf("%s is not reachable: %w", e.c.URL, err)
		}
		// Some services have no model list: the embedding call decides.
	} else {
		var names []string
		for _, m := range models.Models {
			names = append(names, m.Name, m.Model)
		}
		for _, m := range models.Data {
			names = append(names, m.ID)
		}
		r.ModelChecked = len(names) > 0
		for _, n := range names {
			if n == e.c.Model || strings.TrimSuffix(n, ":latest") == e.c.Model {
				r.ModelListed = true
			}
		}
		if r.ModelChecked && !r.ModelListed {
			hint := ""
			if e.c.Provider == ProviderOllama {
				hint = fmt.Sprintf(" (ollama pull %s)", e.c.Model)
			}
			return r, fmt.Errorf("%s has no model %q%s", e.c.URL, e.c.Model, hint)
		}
	}
	start := time.Now()
	vs, err := e.Embed(ctx, []string{"relay doctor checks the embedder"})
	r.Took = time.Since(start)
	if err != nil {
		return r, err
	}
	r.Dimensions = len(vs[0])
	return r, nil
}
