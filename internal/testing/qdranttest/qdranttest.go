// Package qdranttest stands in for a Qdrant server in tests, where none
// can be run (no Qdrant package in the registries this project reaches,
// no Docker engine): it answers the REST calls relay makes, in the shapes
// of Qdrant's API reference (internal/memory/testdata/qdrant holds replies as the
// reference gives them), keeping points in memory and ranking by exact
// cosine. Filters are evaluated as Qdrant defines them (must, should,
// must_not, nested filters, match on a value or an array's element).
// memory.TestQdrantRealServer runs the backend's checks against a real
// server when RELAY_TEST_QDRANT_URL is set.
package qdranttest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// Server is a stand-in Qdrant server.
type Server struct {
	// URL is the base URL (http://127.0.0.1:PORT).
	URL   string
	mu    sync.Mutex
	cols  map[string]*collection
	down  atomic.Bool
	calls sync.Map // pattern → *atomic.Int64
}

type collection struct {
	size    int
	indexes map[string]string
	points  map[uint64]point
}

type point struct {
	vec     []float64
	payload map[string]any
}

// Start runs a server, closed with the test.
func Start(t testing.TB) *Server { return StartWithKey(t, "") }

// StartWithKey runs a server that, as Qdrant with an api_key set, answers
// 401 to requests without key in their api-key header.
func StartWithKey(t testing.TB, key string) *Server {
	t.Helper()
	s := &Server{cols: map[string]*collection{}}
	mux := http.NewServeMux()
	handle := func(pattern string, fn func(w http.ResponseWriter, r *http.Request, c *collection) any) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			n, _ := s.calls.LoadOrStore(pattern, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
			if s.down.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprint(w, `{"status":{"error":"Service unavailable"},"time":0}`)
				return
			}
			if key != "" && r.Header.Get("api-key") != key {
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, `{"status":{"error":"Must provide an API key or an Authorization bearer token"},"time":0}`)
				return
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			var c *collection
			if name := r.PathValue("name"); name != "" {
				c = s.cols[name]
				if c == nil && !(r.Method == http.MethodPut && pattern == "PUT /collections/{name}") {
					w.WriteHeader(http.StatusNotFound)
					fmt.Fprintf(w, `{"status":{"error":"Not found: Collection %s doesn't exist!"},"time":0}`, "`"+name+"`")
					return
				}
			}
			res := fn(w, r, c)
			if e, ok := res.(qdrantError); ok {
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]any{"status": map[string]string{"error": string(e)}, "time": 0})
				return
			}
			json.NewEncoder(w).Encode(map[string]any{"result": res, "status": "ok", "time": 0.0001})
		})
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if s.down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `{"title":"qdrant - vector search engine","version":"1.12.4"}`)
	})
	handle("GET /collections/{name}", func(w http.ResponseWriter, r *http.Request, c *collection) any {
		return map[string]any{"status": "green", "points_count": len(c.points),
			"config": map[string]any{"params": map[string]any{"vectors": map[string]any{"size": c.size, "distance": "Cosine"}}}}
	})
	handle("PUT /collections/{name}", func(w http.ResponseWriter, r *http.Request, c *collection) any {
		if c != nil {
			return qdrantError("Wrong input: Collection `" + r.PathValue("name") + "` already exists!")
		}
		var req struct {
			Vectors struct {
				Size     int    `json:"size"`
				Distance string `json:"distance"`
			} `json:"vectors"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Vectors.Size == 0 || req.Vectors.Distance != "Cosine" {
			return qdrantError(fmt.Sprintf("Format error in JSON body: %v", err))
		}
		s.cols[r.PathValue("name")] = &collection{size: req.Vectors.Size, indexes: map[string]string{}, points: map[uint64]point{}}
		return true
	})
	handle("DELETE /collections/{name}", func(w http.ResponseWriter, r *http.Request, c *collection) any {
		delete(s.cols, r.PathValue("name"))
		return true
	})
	handle("PUT /collections/{name}/index", func(w http.ResponseWriter, r *http.Request, c *collection) any {
		var req struct {
			Field  string `json:"field_name"`
			Schema string `json:"field_schema"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Field == "" {
			return qdrantError("Format error in JSON body")
		}
		c.indexes[req.Field] = req.Schema
		return map[string]any{"operation_id": 1, "status": "completed"}
	})
	handle("PUT /collections/{name}/points", func(w http.ResponseWriter, r *http.Request, c *collection) any {
		var req struct {
			Points []struct {
				ID      uint64         `json:"id"`
				Vector  []float64      `json:"vector"`
				Payload map[string]any `json:"payload"`
			} `json:"points"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			return qdrantError(fmt.Sprintf("Format error in JSON body: %v", err))
		}
		for _, p := range req.Points {
			if len(p.Vector) != c.size {
				return qdrantError(fmt.Sprintf("Wrong input: Vector dimension error: expected dim: %d, got %d", c.size, len(p.Vector)))
			}
		}
		for _, p := range req.Points {
			c.points[p.ID] = point{vec: normalized(p.Vector), payload: p.Payload}
		}
		return map[string]any{"operation_id": 2, "status": "completed"}
	})
	handle("POST /collections/{name}/points/delete", func(w http.ResponseWriter, r *http.Request, c *collection) any {
		var req struct {
			Points []uint64 `json:"points"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			return qdrantError("Format error in JSON body")
		}
		for _, id := range req.Points {
			delete(c.points, id)
		}
		return map[string]any{"operation_id": 3, "status": "completed"}
	})
	handle("POST /collections/{name}/points/query", func(w http.ResponseWriter, r *http.Request, c *collection) any {
		var req struct {
			Query       []float64       `json:"query"`
			Filter      json.RawMessage `json:"filter"`
			Limit       int             `json:"limit"`
			WithPayload bool            `json:"with_payload"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			return qdrantError(fmt.Sprintf("Format error in JSON body: %v", err))
		}
		if len(req.Query) != c.size {
			return qdrantError(fmt.Sprintf("Wrong input: Vector dimension error: expected dim: %d, got %d", c.size, len(req.Query)))
		}
		var f map[string]any
		json.Unmarshal(req.Filter, &f)
		q := normalized(req.Query)
		type scored struct {
			ID      uint64         `json:"id"`
			Version int            `json:"version"`
			Score   float64        `json:"score"`
			Payload map[string]any `json:"payload,omitempty"`
		}
		var out []scored
		for id, p := range c.points {
			if f != nil && !Match(f, p.payload) {
				continue
			}
			var dot float64
			for i := range q {
				dot += q[i] * p.vec[i]
			}
			out = append(out, scored{ID: id, Score: float64(float32(dot)), Payload: p.payload})
		}
		slices.SortFunc(out, func(a, b scored) int { return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID)) })
		out = out[:min(len(out), cmp.Or(req.Limit, 10))]
		if !req.WithPayload {
			for i := range out {
				out[i].Payload = nil
			}
		}
		return map[string]any{"points": out}
	})
	handle("POST /collections/{name}/points/scroll", func(w http.ResponseWriter, r *http.Request, c *collection) any {
		var req struct {
			Limit  int     `json:"limit"`
			Offset *uint64 `json:"offset"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			return qdrantError("Format error in JSON body")
		}
		ids := make([]uint64, 0, len(c.points))
		for id := range c.points {
			if req.Offset == nil || id >= *req.Offset {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		var next any
		if len(ids) > req.Limit {
			next, ids = ids[req.Limit], ids[:req.Limit]
		}
		pts := make([]map[string]any, len(ids))
		for i, id := range ids {
			pts[i] = map[string]any{"id": id, "payload": c.points[id].payload}
		}
		return map[string]any{"points": pts, "next_page_offset": next}
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

type qdrantError string

// Calls returns how many requests matched pattern (as
// "PUT /collections/{name}/index").
func (s *Server) Calls(pattern string) int64 {
	n, ok := s.calls.Load(pattern)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

// Points returns the collection's point count, -1 when it is missing.
func (s *Server) Points(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cols[name]; c != nil {
		return len(c.points)
	}
	return -1
}

// Drop deletes a collection, as a server that lost its data.
func (s *Server) Drop(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cols, name)
}

func normalized(v []float64) []float64 {
	var n float64
	for _, x := range v {
		n += x * x
	}
	n = math.Sqrt(n)
	out := make([]float64, len(v))
	for i, x := range v {
		if n > 0 {
			out[i] = x / n
		}
	}
	return out
}

// stubMatch evaluates a Qdrant filter (as decoded JSON) on a payload.
func Match(f map[string]any, payload map[string]any) bool {
	conds := func(key string) []any { l, _ := f[key].([]any); return l }
	one := func(c any) bool {
		m, _ := c.(map[string]any)
		if key, ok := m["key"].(string); ok {
			want := m["match"].(map[string]any)["value"]
			switch v := payload[key].(type) {
			case []any:
				return slices.Contains(v, want)
			default:
				return v == want
			}
		}
		return Match(m, payload) // a nested filter
	}
	for _, c := range conds("must") {
		if !one(c) {
			return false
		}
	}
	for _, c := range conds("must_not") {
		if one(c) {
			return false
		}
	}
	if should := conds("should"); len(should) > 0 {
		return slices.ContainsFunc(should, one)
	}
	return true
}

// SetDown makes the server answer 503 to everything (true) or work again.
func (s *Server) SetDown(down bool) { s.down.Store(down) }

// DropOnePoint deletes one point of the collection, as a server that lost
// part of its data.
func (s *Server) DropOnePoint(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cols[name]; c != nil {
		for id := range c.points {
			delete(c.points, id)
			return
		}
	}
}
