package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The Qdrant client speaks Qdrant's REST API (port 6333) with net/http:
// the official Go client is gRPC only and would bring grpc and protobuf
// into relay for the seven calls below. Shapes follow Qdrant's API
// reference (1.10 and later, for /points/query); testdata/qdrant holds
// replies as the reference gives them.

// ErrQdrant means the Qdrant server failed: not reachable, or it refused
// a request. The error that wraps it names the URL.
var ErrQdrant = errors.New("qdrant failed")

// errNoCollection is a 404 on the collection.
var errNoCollection = errors.New("no such collection")

// QdrantConfig says which Qdrant server and collection hold the vectors.
type QdrantConfig struct {
	// URL is the REST endpoint, e.g. http://127.0.0.1:6333.
	URL string
	// Collection is the collection's name; it is created on first use.
	Collection string
	// APIKey is sent in the api-key header when set.
	APIKey string
	// Timeout bounds one request; zero means 10 s.
	Timeout time.Duration
}

type qdrantClient struct {
	c    QdrantConfig
	http *http.Client
}

func newQdrantClient(c QdrantConfig) (*qdrantClient, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: qdrant url %q is not an http:// or https:// URL", ErrInvalid, c.URL)
	}
	if c.Collection == "" {
		return nil, fmt.Errorf("%w: qdrant needs a collection name", ErrInvalid)
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	c.URL = strings.TrimRight(c.URL, "/")
	return &qdrantClient{c: c, http: &http.Client{Timeout: c.Timeout}}, nil
}

// qPoint is a point as upsert sends it. IDs are unsigned integers (see
// pointID).
type qPoint struct {
	ID      uint64         `json:"id"`
	Vector  []float32      `json:"vector"`
	Payload map[string]any `json:"payload"`
}

// qScored is a point as query and scroll return it.
type qScored struct {
	ID      json.RawMessage `json:"id"` // an integer or a UUID string
	Score   float64         `json:"score"`
	Payload qPayload        `json:"payload"`
}

// qPayload is the payload relay writes for a memory (see payloadOf).
type qPayload struct {
	ID        string   `json:"id"`
	Text      string   `json:"text"`
	Tags      []string `json:"tags"`
	Author    string   `json:"author"`
	Workspace string   `json:"workspace"`
	Scope     string   `json:"scope"`
	Created   string   `json:"created"`
	Updated   string   `json:"updated"`
	UpdatedMS int64    `json:"updated_ms"`
	Model     string   `json:"model"`
}

// qCollection is what relay reads of a collection's details.
type qCollection struct {
	Status      string `json:"status"`
	PointsCount int64  `json:"points_count"`
	Config      struct {
		Params struct {
			Vectors json.RawMessage `json:"vectors"`
		} `json:"params"`
	} `json:"config"`
}

// vectorParams returns the size and distance of the collection's unnamed
// vector; ok is false for a collection of named vectors only.
func (c *qCollection) vectorParams() (size int, distance string, ok bool) {
	var v struct {
		Size     int    `json:"size"`
		Distance string `json:"distance"`
	}
	if json.Unmarshal(c.Config.Params.Vectors, &v) != nil || v.Size == 0 {
		return 0, "", false
	}
	return v.Size, v.Distance, true
}

func (q *qdrantClient) collPath(rest string) string {
	return "/collections/" + url.PathEscape(q.c.Collection) + rest
}

// do sends body (JSON, when not nil) and decodes the reply's "result"
// into result (when not nil). Qdrant's errors come as
// {"status":{"error":"..."}}: the message is kept.
func (q *qdrantClient) do(ctx context.Context, method, path string, body, result any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, q.c.URL+path, rd)
	if err != nil {
		return fmt.Errorf("%w: qdrant at %s: %v", ErrQdrant, q.c.URL, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if q.c.APIKey != "" {
		req.Header.Set("api-key", q.c.APIKey)
	}
	resp, err := q.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: qdrant at %s is not reachable: %v", ErrQdrant, q.c.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%w: qdrant at %s: %s %s: %v", ErrQdrant, q.c.URL, method, path, err)
	}
	var rep struct {
		Status json.RawMessage `json:"status"`
		Result json.RawMessage `json:"result"`
	}
	jerr := json.Unmarshal(data, &rep)
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(data))
		var st struct {
			Error string `json:"error"`
		}
		if jerr == nil && json.Unmarshal(rep.Status, &st) == nil && st.Error != "" {
			msg = st.Error
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		err := fmt.Errorf("%w: qdrant at %s: %s %s: %s: %s", ErrQdrant, q.c.URL, method, path, resp.Status, msg)
		if resp.StatusCode == http.StatusNotFound && strings.HasPrefix(path, q.collPath("")) {
			err = fmt.Errorf("%w: %w", errNoCollection, err)
		}
		return err
	}
	if jerr != nil {
		return fmt.Errorf("%w: qdrant at %s: %s %s: bad reply: %v", ErrQdrant, q.c.URL, method, path, jerr)
	}
	if result != nil {
		if err := json.Unmarshal(rep.Result, result); err != nil {
			return fmt.Errorf("%w: qdrant at %s: %s %s: bad result: %v", ErrQdrant, q.c.URL, method, path, err)
		}
	}
	return nil
}

// version is GET /: the server's version ("1.12.4").
func (q *qdrantClient) version(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, q.c.URL+"/", nil)
	if err != nil {
		return "", fmt.Errorf("%w: qdrant at %s: %v", ErrQdrant, q.c.URL, err)
	}
	if q.c.APIKey != "" {
		req.Header.Set("api-key", q.c.APIKey)
	}
	resp, err := q.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: qdrant at %s is not reachable: %v", ErrQdrant, q.c.URL, err)
	}
	defer resp.Body.Close()
	var v struct {
		Title   string `json:"title"`
		Version string `json:"version"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%w: %s does not answer as a Qdrant server (GET /: %s)", ErrQdrant, q.c.URL, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil || !strings.Contains(v.Title, "qdrant") {
		return "", fmt.Errorf("%w: %s does not answer as a Qdrant server (GET / gave no qdrant title)", ErrQdrant, q.c.URL)
	}
	return v.Version, nil
}

// collection is GET /collections/NAME; errNoCollection when missing.
func (q *qdrantClient) collection(ctx context.Context) (qCollection, error) {
	var c qCollection
	err := q.do(ctx, http.MethodGet, q.collPath(""), nil, &c)
	return c, err
}

// createCollection makes the collection for vectors of dims dimensions
// compared by cosine.
func (q *qdrantClient) createCollection(ctx context.Context, dims int) error {
	body := map[string]any{"vectors": map[string]any{"size": dims, "distance": "Cosine"}}
	return q.do(ctx, http.MethodPut, q.collPath(""), body, nil)
}

// createIndex makes a payload index on field (schema "keyword",
// "integer", …); an index that exists already is fine.
func (q *qdrantClient) createIndex(ctx context.Context, field, schema string) error {
	body := map[string]any{"field_name": field, "field_schema": schema}
	return q.do(ctx, http.MethodPut, q.collPath("/index?wait=true"), body, nil)
}

// upsert writes points, waiting until they are searchable.
func (q *qdrantClient) upsert(ctx context.Context, ps []qPoint) error {
	return q.do(ctx, http.MethodPut, q.collPath("/points?wait=true"), map[string]any{"points": ps}, nil)
}

// deletePoints deletes points by id, waiting until done.
func (q *qdrantClient) deletePoints(ctx context.Context, ids []uint64) error {
	return q.do(ctx, http.MethodPost, q.collPath("/points/delete?wait=true"), map[string]any{"points": ids}, nil)
}

// query returns up to limit points passing filter nearest vec, with
// their payloads, best first.
func (q *qdrantClient) query(ctx context.Context, vec []float32, filter *qFilter, limit int) ([]qScored, error) {
	body := map[string]any{"query": vec, "limit": limit, "with_payload": true}
	if filter != nil {
		body["filter"] = filter
	}
	var res struct {
		Points []qScored `json:"points"`
	}
	err := q.do(ctx, http.MethodPost, q.collPath("/points/query"), body, &res)
	return res.Points, err
}

// scroll returns a page of up to limit point ids from offset (nil: the
// first) and the offset of the next page (nil at the end).
func (q *qdrantClient) scroll(ctx context.Context, offset json.RawMessage, limit int) ([]qScored, json.RawMessage, error) {
	body := map[string]any{"limit": limit, "with_payload": []string{"id", "updated_ms", "model"}, "with_vector": false}
	if len(offset) > 0 && string(offset) != "null" {
		body["offset"] = offset
	}
	var res struct {
		Points []qScored       `json:"points"`
		Next   json.RawMessage `json:"next_page_offset"`
	}
	err := q.do(ctx, http.MethodPost, q.collPath("/points/scroll"), body, &res)
	if string(res.Next) == "null" {
		res.Next = nil
	}
	return res.Points, res.Next, err
}

// deleteCollection deletes the collection and its points.
func (q *qdrantClient) deleteCollection(ctx context.Context) error {
	return q.do(ctx, http.MethodDelete, q.collPath(""), nil, nil)
}
