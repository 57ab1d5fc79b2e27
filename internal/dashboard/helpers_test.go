package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/dashboard"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/memory"
)

// env is a real hub with the memory service and a dashboard on it.
type env struct {
	t   *testing.T
	hub *hub.Hub
	d   *dashboard.Server
}

func start(t *testing.T, mods ...func(*dashboard.Options)) *env {
	t.Helper()
	h := hubtest.Start(t)
	serveMemory(t, h)
	o := dashboard.Options{URL: h.URL(), Token: h.Token()}
	for _, m := range mods {
		m(&o)
	}
	d, err := dashboard.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return &env{t: t, hub: h, d: d}
}

// serveMemory runs the memory service on h with a store in a temporary
// folder, as relay up does.
func serveMemory(t *testing.T, h *hub.Hub) {
	t.Helper()
	st, err := memory.Open(filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := client(t, h, "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- memory.Serve(ctx, c.Conn(), memory.DefaultSubjectPrefix, st) }()
	t.Cleanup(func() { cancel(); <-done; st.Close() })
}

// client connects a bus client named name (not registered).
func client(t *testing.T, h *hub.Hub, name string) *bus.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: h.Token(), Name: name, Heartbeat: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// agent connects and registers name with the given CLI.
func agent(t *testing.T, h *hub.Hub, name, cli string) *bus.Client {
	t.Helper()
	c := client(t, h, name)
	c.SetCLI(cli)
	if err := c.Register(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// socket is a websocket client of the feed, as a tool (not a browser)
// would use it: the token as a bearer header.
type socket struct {
	t    *testing.T
	conn *websocket.Conn
	last uint64 // highest seq seen
	all  []dashboard.Frame
	// wait bounds next's read and until's search; zero means 10 s.
	wait time.Duration
}

func (s *socket) budget() time.Duration {
	if s.wait > 0 {
		return s.wait
	}
	return 10 * time.Second
}

func (e *env) wsURL(query string) string {
	return "ws" + strings.TrimPrefix(e.d.URL(), "http") + "ws" + query
}

func (e *env) dial(query string) *socket {
	e.t.Helper()
	h := http.Header{"Authorization": {"Bearer " + e.hub.Token()}}
	conn, resp, err := websocket.DefaultDialer.Dial(e.wsURL(query), h)
	if err != nil {
		e.t.Fatalf("dial %s: %v (%v)", query, err, resp)
	}
	s := &socket{t: e.t, conn: conn}
	e.t.Cleanup(func() { conn.Close() })
	return s
}

// next reads one frame (failing after 10 s, or s.wait) and checks that sequence
// numbers have no gap.
func (s *socket) next() dashboard.Frame {
	s.t.Helper()
	_ = s.conn.SetReadDeadline(time.Now().Add(s.budget()))
	_, data, err := s.conn.ReadMessage()
	if err != nil {
		s.t.Fatalf("read frame: %v (frames so far: %s)", err, s.summary())
	}
	var f dashboard.Frame
	if err := json.Unmarshal(data, &f); err != nil {
		s.t.Fatalf("frame %s: %v", data, err)
	}
	switch {
	case f.Type == dashboard.TypeHello:
		s.last = f.Seq
	case f.Seq != 0:
		if f.Seq != s.last+1 {
			s.t.Fatalf("frame %s has seq %d after %d: a gap", data, f.Seq, s.last)
		}
		s.last = f.Seq
	}
	s.all = append(s.all, f)
	return f
}

// until reads frames until match returns true, and returns that frame.
func (s *socket) until(what string, match func(dashboard.Frame) bool) dashboard.Frame {
	s.t.Helper()
	deadline := time.Now().Add(s.budget())
	for time.Now().Before(deadline) {
		if f := s.next(); match(f) {
			return f
		}
	}
	s.t.Fatalf("no %s within %v; frames: %s", what, s.budget(), s.summary())
	return dashboard.Frame{}
}

func (s *socket) send(r dashboard.Request) {
	s.t.Helper()
	if err := s.conn.WriteJSON(r); err != nil {
		s.t.Fatal(err)
	}
}

func (s *socket) summary() string {
	var b strings.Builder
	for _, f := range s.all {
		data, _ := json.Marshal(f)
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

func isAgent(name string, st bus.State) func(dashboard.Frame) bool {
	return func(f dashboard.Frame) bool {
		return f.Type == dashboard.TypeAgent && f.Agent.Name == name && (st == "" || f.Agent.State == st)
	}
}

func isMessage(body string) func(dashboard.Frame) bool {
	return func(f dashboard.Frame) bool { return f.Type == dashboard.TypeMessage && f.Message.Body == body }
}

func isReceipt(id, name string, st bus.Status) func(dashboard.Frame) bool {
	return func(f dashboard.Frame) bool {
		return f.Type == dashboard.TypeReceipt && f.ID == id && f.Name == name && f.Status == st
	}
}

// noRedirect is an HTTP client that shows redirects instead of following.
func noRedirect() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func query(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return "?" + v.Encode()
}
