package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/qdranttest"
)

func TestQdrantFilter(t *testing.T) {
	cases := []struct {
		name string
		f    Filter
		want string
	}{
		{"none", Filter{Limit: 5}, `null`},
		{"workspace", Filter{Workspace: "acme"},
			`{"must":[{"should":[{"key":"workspace","match":{"value":"acme"}},{"key":"scope","match":{"value":"global"}}]}]}`},
		{"viewer", Filter{Viewer: "Bob"},
			`{"must_not":[{"must":[{"key":"scope","match":{"value":"agent"}}],"must_not":[{"key":"author","match":{"value":"Bob"}}]}]}`},
		{"author scope tags", Filter{Author: "Alice", Scope: ScopeAgent, Tags: []string{"#Ops", "db"}},
			`{"must":[{"key":"author","match":{"value":"Alice"}},{"key":"scope","match":{"value":"agent"}},{"key":"tags","match":{"value":"db"}},{"key":"tags","match":{"value":"ops"}}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := json.Marshal(qdrantFilter(c.f))
			if string(got) != c.want {
				t.Errorf("filter:\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestQdrantFilterMatchesWhere checks that the Qdrant filter keeps the
// same memories as the file's SQL filter, over every combination.
func TestQdrantFilterMatchesWhere(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	var all []Memory
	for _, ws := range []string{"acme", "other"} {
		for _, author := range []string{"Alice", "Bob"} {
			for _, sc := range []Scope{ScopeAgent, ScopeWorkspace, ScopeGlobal} {
				for _, tags := range [][]string{nil, {"ops"}, {"ops", "db"}} {
					m, _, err := st.Save(ctx, Memory{Text: fmt.Sprintf("%s %s %s %v", ws, author, sc, tags), Tags: tags, Author: author, Workspace: ws, Scope: sc})
					if err != nil {
						t.Fatal(err)
					}
					all = append(all, m)
				}
			}
		}
	}
	for _, f := range []Filter{{}, {Workspace: "acme"}, {Viewer: "Bob"}, {Workspace: "acme", Viewer: "Alice"},
		{Author: "Alice", Scope: ScopeAgent}, {Tags: []string{"ops"}}, {Tags: []string{"ops", "db"}, Workspace: "other", Viewer: "Bob"}} {
		f.Limit = MaxLimit
		ms, err := st.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var want, got []string
		for _, m := range ms {
			want = append(want, m.ID)
		}
		var qf map[string]any
		data, _ := json.Marshal(qdrantFilter(f))
		json.Unmarshal(data, &qf)
		for _, m := range all {
			var p map[string]any
			data, _ := json.Marshal(payloadOf(m, "x"))
			json.Unmarshal(data, &p)
			if qf == nil || qdranttest.Match(qf, p) {
				got = append(got, m.ID)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("filter %+v: qdrant keeps %d memories, the file %d", f, len(got), len(want))
		}
	}
}

func TestPointID(t *testing.T) {
	for _, c := range []struct {
		id   string
		want uint64
	}{{"00000000", 0}, {"00000001", 1}, {"0000000z", 31}, {"00000010", 32}, {"zzzzzzzz", 1<<40 - 1}} {
		if got, err := pointID(c.id); err != nil || got != c.want {
			t.Errorf("pointID(%q) = %d, %v; want %d", c.id, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "0000000", "0000000u", "ABCDEFGH"} {
		if _, err := pointID(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("pointID(%q): err %v, want ErrInvalid", bad, err)
		}
	}
}

// recorded serves the files of testdata/qdrant by "METHOD path" and
// keeps each request's body.
type recorded struct {
	files  map[string]string // "METHOD /path" → file (a 404 file for *_missing)
	bodies map[string]string
	header http.Header
}

func startRecorded(t *testing.T, files map[string]string) (*recorded, string) {
	rec := &recorded{files: files, bodies: map[string]string{}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.RequestURI()
		b, _ := io.ReadAll(r.Body)
		rec.bodies[key], rec.header = string(b), r.Header.Clone()
		f, ok := rec.files[key]
		if !ok {
			t.Errorf("unexpected request %s", key)
			w.WriteHeader(http.StatusTeapot)
			return
		}
		data, err := os.ReadFile(filepath.Join("testdata", "qdrant", f))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.Contains(f, "missing"):
			w.WriteHeader(http.StatusNotFound)
		case strings.Contains(f, "bad_request"):
			w.WriteHeader(http.StatusBadRequest)
		}
		w.Write(data)
	}))
	t.Cleanup(ts.Close)
	return rec, ts.URL
}

// TestQdrantClientRecorded checks the requests relay sends and its
// reading of replies as Qdrant's API reference gives them.
func TestQdrantClientRecorded(t *testing.T) {
	ctx := context.Background()
	rec, url := startRecorded(t, map[string]string{
		"GET /":                                                  "root.json",
		"GET /collections/relay-memory":                          "collection.json",
		"GET /collections/named":                                 "collection_named.json",
		"GET /collections/gone":                                  "collection_missing.json",
		"PUT /collections/relay-memory":                          "ok_true.json",
		"PUT /collections/relay-memory/index?wait=true":          "update.json",
		"PUT /collections/relay-memory/points?wait=true":         "update.json",
		"POST /collections/relay-memory/points/delete?wait=true": "update.json",
		"POST /collections/relay-memory/points/query":            "query.json",
		"POST /collections/relay-memory/points/scroll":           "scroll.json",
		"POST /collections/bad/points/query":                     "bad_request.json",
	})
	client := func(coll string) *qdrantClient {
		q, err := newQdrantClient(QdrantConfig{URL: url + "/", Collection: coll, APIKey: "sekrit"})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := client("relay-memory")

	if v, err := q.version(ctx); err != nil || v != "1.12.4" {
		t.Errorf("version = %q, %v", v, err)
	}
	if got := rec.header.Get("api-key"); got != "sekrit" {
		t.Errorf("api-key header %q", got)
	}
	c, err := q.collection(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if size, dist, ok := c.vectorParams(); size != 768 || dist != "Cosine" || !ok || c.PointsCount != 3 {
		t.Errorf("collection: size %d distance %q ok %v points %d", size, dist, ok, c.PointsCount)
	}
	c, err = client("named").collection(ctx)
	if _, _, ok := c.vectorParams(); err != nil || ok {
		t.Errorf("named vectors: ok %v err %v, want not ok", ok, err)
	}
	_, err = client("gone").collection(ctx)
	if !errors.Is(err, errNoCollection) || !errors.Is(err, ErrQdrant) || !strings.Contains(err.Error(), "Collection `relay-memory` doesn't exist") ||
		!strings.Contains(err.Error(), url) {
		t.Errorf("missing collection: %v", err)
	}

	wantBody := func(key, want string) {
		t.Helper()
		if got := rec.bodies[key]; got != want {
			t.Errorf("%s body:\n got %s\nwant %s", key, got, want)
		}
	}
	if err := q.createCollection(ctx, 768); err != nil {
		t.Fatal(err)
	}
	wantBody("PUT /collections/relay-memory", `{"vectors":{"distance":"Cosine","size":768}}`)
	if err := q.createIndex(ctx, "tags", "keyword"); err != nil {
		t.Fatal(err)
	}
	wantBody("PUT /collections/relay-memory/index?wait=true", `{"field_name":"tags","field_schema":"keyword"}`)

	m := Memory{ID: "00000021", Text: "we deploy with ArgoCD", Tags: []string{"ops"}, Author: "Alice", Workspace: "acme", Scope: ScopeWorkspace,
		Created: time.UnixMilli(1796479200000).UTC(), Updated: time.UnixMilli(1796479200000).UTC()}
	if err := q.upsert(ctx, []qPoint{{ID: 65, Vector: []float32{0.6, 0.8}, Payload: payloadOf(m, "ollama/nomic-embed-text")}}); err != nil {
		t.Fatal(err)
	}
	wantBody("PUT /collections/relay-memory/points?wait=true", `{"points":[{"id":65,"vector":[0.6,0.8],"payload":{"author":"Alice","created":"2026-12-05T14:00:00Z","id":"00000021","model":"ollama/nomic-embed-text","scope":"workspace","tags":["ops"],"text":"we deploy with ArgoCD","updated":"2026-12-05T14:00:00Z","updated_ms":1796479200000,"workspace":"acme"}}]}`)
	if err := q.deletePoints(ctx, []uint64{65, 66}); err != nil {
		t.Fatal(err)
	}
	wantBody("POST /collections/relay-memory/points/delete?wait=true", `{"points":[65,66]}`)

	pts, err := q.query(ctx, []float32{1, 0}, qdrantFilter(Filter{Author: "Alice"}), 5)
	if err != nil {
		t.Fatal(err)
	}
	wantBody("POST /collections/relay-memory/points/query", `{"filter":{"must":[{"key":"author","match":{"value":"Alice"}}]},"limit":5,"query":[1,0],"with_payload":true}`)
	if len(pts) != 2 || pts[0].Score != 0.91 || pts[0].Payload.ID != "1234abcd" || pts[0].Payload.UpdatedMS != 1796479200000 ||
		!slices.Equal(pts[0].Payload.Tags, []string{"ops"}) || pts[1].Payload.ID != "" || string(pts[1].ID) != `"5c56c793-69f3-4fbf-87e6-c4bf54c28c26"` {
		t.Errorf("query points: %+v", pts)
	}

	got, next, err := q.scroll(ctx, nil, 2)
	if err != nil || len(got) != 2 || string(next) != "3" || got[1].Payload.ID != "00000002" {
		t.Errorf("scroll: %+v next %s err %v", got, next, err)
	}
	wantBody("POST /collections/relay-memory/points/scroll", `{"limit":2,"with_payload":["id","updated_ms","model"],"with_vector":false}`)
	rec.files["POST /collections/relay-memory/points/scroll"] = "scroll_last.json"
	got, next, err = q.scroll(ctx, next, 2)
	if err != nil || len(got) != 1 || next != nil {
		t.Errorf("last scroll page: %+v next %s err %v", got, next, err)
	}
	wantBody("POST /collections/relay-memory/points/scroll", `{"limit":2,"offset":3,"with_payload":["id","updated_ms","model"],"with_vector":false}`)

	_, err = client("bad").query(ctx, []float32{1}, nil, 1)
	if !errors.Is(err, ErrQdrant) || errors.Is(err, errNoCollection) || !strings.Contains(err.Error(), "expected dim: 768, got 32") {
		t.Errorf("bad request: %v", err)
	}
}
