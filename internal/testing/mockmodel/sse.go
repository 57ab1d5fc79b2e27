package mockmodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// sse writes server-sent events and flushes each one.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

// startSSE sends the event-stream headers.
func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	s := &sse{w: w, f: f}
	s.flush()
	return s
}

func (s *sse) flush() {
	if s.f != nil {
		s.f.Flush()
	}
}

// event sends one event; an empty name sends a data-only event.
func (s *sse) event(name string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", name, err)
	}
	if name != "" {
		if _, err := fmt.Fprintf(s.w, "event: %s\n", name); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", b); err != nil {
		return err
	}
	s.flush()
	return nil
}

// writeJSON answers with a JSON document.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// readBody reads a request body, capped at 64 MiB.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("read %s %s body: %w", r.Method, r.URL.Path, err)
	}
	return b, nil
}

// baseRequest fills the fields every server logs.
func baseRequest(r *http.Request, body []byte) Request {
	path := r.URL.Path
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	return Request{Method: r.Method, Path: path, Body: json.RawMessage(body), Time: time.Now()}
}

// idGen returns unique ids with a prefix for one server; safe for
// concurrent use.
type idGen struct{ n atomic.Int64 }

func (g *idGen) next(prefix string) string {
	return fmt.Sprintf("%s%06d", prefix, g.n.Add(1))
}
