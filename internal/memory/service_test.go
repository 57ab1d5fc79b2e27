package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// startNATS runs an in-process NATS server on a random port, shut down
// with the test, and returns its URL.
func startNATS(t *testing.T) string {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(ns.Shutdown)
	return ns.ClientURL()
}

func connect(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// serveTest serves a fresh store on prefix and returns a client on another
// connection, once the service answers.
func serveTest(t *testing.T, url, prefix string) (*Store, func(t *testing.T) *Client) {
	t.Helper()
	st := openTest(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, connect(t, url), prefix, st) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	newClient := func(t *testing.T) *Client { return NewClient(connect(t, url), prefix) }
	c := newClient(t)
	testutil.Eventually(t, func() error {
		_, err := c.List(context.Background(), Filter{})
		return err
	})
	return st, newClient
}

func TestServiceRoundTrip(t *testing.T) {
	ctx := context.Background()
	url := startNATS(t)
	_, newClient := serveTest(t, url, "relay.memory")
	alice, bob := newClient(t), newClient(t)

	saved, created, err := alice.Save(ctx, Memory{Text: "The staging database is reset nightly", Author: "Alice", Workspace: "w", Tags: []string{"db"}})
	if err != nil || !created || saved.ID == "" {
		t.Fatalf("save = %+v, %v, %v", saved, created, err)
	}
	if _, created, _ := alice.Save(ctx, Memory{Text: "the staging database is reset nightly", Workspace: "w"}); created {
		t.Error("a duplicate made a second memory over the wire")
	}
	res, err := bob.Search(ctx, Query{Text: "staging databases", Filter: Filter{Workspace: "w", Viewer: "Bob"}})
	if err != nil || len(res) != 1 || res[0].ID != saved.ID || res[0].Snippet == "" {
		t.Fatalf("search from another client = %+v, %v", res, err)
	}
	if got, err := bob.Get(ctx, saved.ID); err != nil || got.Text != saved.Text || !got.Created.Equal(saved.Created) {
		t.Fatalf("get = %+v, %v", got, err)
	}
	list, err := bob.List(ctx, Filter{Tags: []string{"db"}})
	if err != nil || len(list) != 1 {
		t.Fatalf("list = %+v, %v", list, err)
	}

	var exp bytes.Buffer
	if err := bob.Export(ctx, &exp); err != nil || strings.Count(exp.String(), "\n") != 1 {
		t.Fatalf("export = %q, %v", exp.String(), err)
	}
	gone, err := bob.Forget(ctx, saved.ID)
	if err != nil || gone.ID != saved.ID {
		t.Fatalf("forget = %+v, %v", gone, err)
	}
	_, err = alice.Forget(ctx, saved.ID)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), saved.ID) {
		t.Fatalf("forget twice over the wire: err = %v, want ErrNotFound naming the id", err)
	}
	if _, _, err := alice.Save(ctx, Memory{Text: " "}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("save empty over the wire: err = %v, want ErrInvalid", err)
	}
	added, skipped, err := alice.Import(ctx, &exp)
	if err != nil || added != 1 || skipped != 0 {
		t.Fatalf("import = %d, %d, %v", added, skipped, err)
	}
	if got, err := bob.Get(ctx, saved.ID); err != nil || got.Text != saved.Text {
		t.Fatalf("after import, get = %+v, %v: want the same id back", got, err)
	}
}

func TestServiceExportPages(t *testing.T) {
	ctx := context.Background()
	url := startNATS(t)
	st, newClient := serveTest(t, url, "m")
	var ms []Memory
	for i := range exportPage*2 + 5 {
		ms = append(ms, Memory{Text: strings.Repeat("note ", 1+i%3) + string(rune('a'+i%26)) + strings.Repeat("x", i)})
	}
	if _, _, err := st.ImportMemories(ctx, ms); err != nil {
		t.Fatal(err)
	}
	var viaWire, direct bytes.Buffer
	if err := newClient(t).Export(ctx, &viaWire); err != nil {
		t.Fatal(err)
	}
	if err := st.Export(ctx, &direct); err != nil {
		t.Fatal(err)
	}
	if viaWire.String() != direct.String() || strings.Count(direct.String(), "\n") != len(ms) {
		t.Fatalf("export over the wire differs from the file's (%d vs %d bytes)", viaWire.Len(), direct.Len())
	}
}

func TestServiceBadRequests(t *testing.T) {
	url := startNATS(t)
	serveTest(t, url, "relay.memory")
	nc := connect(t, url)
	tests := []struct {
		subject, body, code, contains string
	}{
		{"relay.memory.search", `{not json`, "invalid", "bad search request"},
		{"relay.memory.save", `{"memory": {"text": "x"}, "extra": 1}`, "invalid", "unknown field"},
		{"relay.memory.save", `{}`, "invalid", "needs a memory"},
		{"relay.memory.forget", `{}`, "invalid", "needs an id"},
		{"relay.memory.get", `{"id": "zzzzzzzz"}`, "not_found", "zzzzzzzz"},
		{"relay.memory.fly", `{}`, "invalid", `unknown memory request "fly"`},
	}
	for _, tt := range tests {
		msg, err := nc.Request(tt.subject, []byte(tt.body), 5*time.Second)
		if err != nil {
			t.Errorf("%s %s: %v (want an error reply, not silence)", tt.subject, tt.body, err)
			continue
		}
		var rep reply
		if err := json.Unmarshal(msg.Data, &rep); err != nil || rep.Error == nil {
			t.Errorf("%s %s: reply %s, want an error", tt.subject, tt.body, msg.Data)
			continue
		}
		if rep.Error.Code != tt.code || !strings.Contains(rep.Error.Message, tt.contains) {
			t.Errorf("%s %s: error %+v, want code %s containing %q", tt.subject, tt.body, rep.Error, tt.code, tt.contains)
		}
	}
}

func TestClientWithoutService(t *testing.T) {
	url := startNATS(t)
	c := NewClient(connect(t, url), "nobody.home")
	_, err := c.List(context.Background(), Filter{})
	if !errors.Is(err, ErrNoService) {
		t.Fatalf("err = %v, want ErrNoService", err)
	}
}

func TestServiceConcurrentClients(t *testing.T) {
	ctx := context.Background()
	url := startNATS(t)
	st, newClient := serveTest(t, url, "relay.memory")
	const clients, each = 6, 20
	errs := make(chan error, clients)
	for c := range clients {
		cl := newClient(t)
		go func() {
			for i := range each {
				if _, _, err := cl.Save(ctx, Memory{Text: fmt.Sprintf("client %d note %d", c, i), Workspace: "w"}); err != nil {
					errs <- err
					return
				}
				if _, err := cl.Search(ctx, Query{Text: "note", Filter: Filter{Workspace: "w"}}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	all, _ := st.List(ctx, Filter{Limit: MaxLimit})
	if len(all) != clients*each {
		t.Fatalf("have %d memories, want %d", len(all), clients*each)
	}
}
