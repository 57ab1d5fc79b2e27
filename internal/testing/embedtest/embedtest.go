// Package embedtest is a stand-in embedding model for tests: an HTTP
// server that speaks Ollama's /api/embed and /api/tags and the
// OpenAI-compatible /v1/embeddings and /v1/models, as the real services
// do, and maps each text to a vector from a small table of concepts, so
// that related words ("deploy", "ArgoCD", "continuous delivery") land near
// each other and unrelated ones apart. Only the model is faked: the HTTP
// exchange is the real one.
package embedtest

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"
)

// Model is the model name the server knows.
const Model = "concept-embed"

// concepts maps words to the concept (dimension) they stand for.
var concepts = map[string]int{}

func init() {
	for i, words := range [][]string{
		{"deploy", "deploys", "deployed", "deploying", "deployment", "argocd", "continuous", "delivery", "release", "rollout", "ci", "cd", "pipeline", "flux", "spinnaker"},
		{"pnpm", "npm", "yarn", "package", "packages", "dependency", "dependencies", "install"},
		{"postgres", "postgresql", "database", "sql", "sqlite", "mysql", "db", "schema"},
		{"secret", "secrets", "key", "keys", "vault", "credential", "credentials", "signing", "token"},
		{"test", "tests", "testing", "pytest", "unit", "integration", "flaky"},
		{"tool", "tools", "utility", "program"},
		{"cat", "cats", "kitten", "dog", "dogs", "pet", "pets"},
	} {
		for _, w := range words {
			concepts[w] = i
		}
	}
}

// conceptDims is how many dimensions the concepts take; the others carry
// a hash of the words no concept knows, weaker.
const conceptDims = 8

var stop = map[string]bool{"we": true, "with": true, "the": true, "a": true, "an": true, "for": true,
	"to": true, "of": true, "in": true, "on": true, "is": true, "are": true, "our": true, "use": true, "uses": true, "and": true}

// Vector is the server's vector for text, of length dims (at least 16),
// not normalised.
func Vector(text string, dims int) []float32 {
	v := make([]float32, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	for _, w := range words {
		if c, ok := concepts[w]; ok {
			v[c] += 1
			continue
		}
		if stop[w] {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[conceptDims+int(h.Sum32()%uint32(dims-conceptDims))] += 0.5
	}
	if len(words) == 0 || allZero(v) {
		v[dims-1] = 0.01
	}
	return v
}

func allZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// Server is a running stand-in embedder.
type Server struct {
	// URL is the base URL (http://127.0.0.1:PORT).
	URL  string
	Dims int
	down atomic.Bool
	// Texts counts the texts embedded.
	Texts atomic.Int64
}

// Start runs a server giving vectors of dims dimensions, closed with the
// test.
func Start(t testing.TB, dims int) *Server {
	t.Helper()
	s := &Server{Dims: max(dims, 16)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/embed", func(w http.ResponseWriter, r *http.Request) {
		vs, ok := s.embed(w, r)
		if ok {
			json.NewEncoder(w).Encode(map[string]any{"model": Model, "embeddings": vs})
		}
	})
	mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		vs, ok := s.embed(w, r)
		if !ok {
			return
		}
		data := make([]map[string]any, len(vs))
		for i, v := range vs {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": Model, "data": data})
	})
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		if s.refuse(w) {
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"models": []map[string]string{{"name": Model + ":latest", "model": Model + ":latest"}}})
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if s.refuse(w) {
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []map[string]string{{"id": Model}}})
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

// SetDown makes the server answer 503 to everything (true) or work again.
func (s *Server) SetDown(down bool) { s.down.Store(down) }

func (s *Server) refuse(w http.ResponseWriter) bool {
	if s.down.Load() {
		http.Error(w, "model is loading", http.StatusServiceUnavailable)
		return true
	}
	return false
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request) ([][]float32, bool) {
	if s.refuse(w) {
		return nil, false
	}
	var req struct {
		Model string `json:"model"`
		Input any    `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	if strings.TrimSuffix(req.Model, ":latest") != Model {
		http.Error(w, `{"error":"model \"`+req.Model+`\" not found, try pulling it first"}`, http.StatusNotFound)
		return nil, false
	}
	var texts []string
	switch in := req.Input.(type) {
	case string:
		texts = []string{in}
	case []any:
		for _, x := range in {
			sx, _ := x.(string)
			texts = append(texts, sx)
		}
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = Vector(t, s.Dims)
	}
	s.Texts.Add(int64(len(texts)))
	return out, true
}

// Cosine is the cosine similarity of a and b.
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}
