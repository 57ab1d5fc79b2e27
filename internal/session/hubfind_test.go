package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/relayhq/relay/internal/agents/shell"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hub/hubtest"
)

// joinHome connects a session to the hub recorded in home (no Hub named,
// as `relay wrap` without --hub) and claims the name Alice; the session
// leaves the team when the test ends. No relay binary is on PATH: a hub
// that must be started is started inside the test.
func joinHome(t *testing.T, home string) *Session {
	t.Helper()
	t.Setenv("PATH", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	s := newSession(ctx, Config{Home: home, Name: "Alice", Workspace: "default", Profile: shell.Profile()})
	t.Cleanup(func() {
		s.closeAll()
		cancel()
	})
	cctx, ccancel := context.WithTimeout(ctx, connectWait)
	defer ccancel()
	if err := s.connect(cctx); err != nil {
		t.Fatalf("join the hub of %s: %v", home, err)
	}
	return s
}

// connectionsTo is how many client connections h has taken since it
// started.
func connectionsTo(t *testing.T, h *hub.Hub) uint64 {
	t.Helper()
	v, err := h.Server().Varz(nil)
	if err != nil {
		t.Fatal(err)
	}
	return v.TotalConnections
}

// TestStartConnectsToTheHubOnce: a session that finds its hub through
// RELAY_HOME connects to it once: the hub is not asked first on a
// connection of its own (issue 34: two more connections on every start).
func TestStartConnectsToTheHubOnce(t *testing.T) {
	home := t.TempDir()
	h := hubtest.StartAt(t, home, "127.0.0.1:0")
	before := connectionsTo(t, h)
	s := joinHome(t, home)
	if s.name() != "Alice" || s.link.client.Load() == nil {
		t.Fatalf("not joined as Alice (name %q)", s.name())
	}
	if n := connectionsTo(t, h) - before; n != 1 {
		t.Errorf("the hub took %d connections for one session's start, want 1", n)
	}
}

// TestStartPastAStaleRecord: a hub record that names a live process but a
// port where no hub answers (a hub that hung up, its pid reused) does not
// keep the session from its team: the connection it makes is refused, the
// hub is looked for again, and one is started.
func TestStartPastAStaleRecord(t *testing.T) {
	home := t.TempDir()
	old := hubtest.StartAt(t, home, "127.0.0.1:0")
	url := old.URL()
	old.Shutdown()
	// The record of the hub that left, with a live pid (this process's).
	path := filepath.Join(hub.Dir(home), "hub.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	st["pid"], st["url"] = os.Getpid(), url
	if b, err = json.Marshal(st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	s := joinHome(t, home)
	ep, err := hub.Discover(home)
	if err != nil {
		t.Fatalf("no hub answers after the session started: %v", err)
	}
	peer := newPeer(t, ep.URL, ep.Token, "Bob")
	waitFor(t, "the new hub lists Alice", func() error {
		_, err := stateOf(peer.c, "Alice")
		return err
	})
	if s.name() != "Alice" {
		t.Errorf("joined as %q, want Alice", s.name())
	}
}

// TestCredentialAsideOfStart: the agent's own credential is asked for
// beside its start, not before: a hub that answers the request only once
// the session has joined still gives the agent its credential, which the
// identity file then holds.
func TestCredentialAsideOfStart(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	t.Cleanup(srv.Shutdown)
	joined := make(chan struct{})
	issuer, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(issuer.Close)
	if _, err := issuer.Subscribe(hub.IssueSubject, func(m *nats.Msg) {
		go func() {
			<-joined // answered only once the session has joined
			b, _ := json.Marshal(hub.Credential{Token: "agent-alice", InboxPrefix: "_RELAY_INBOX.default.Alice"})
			_ = m.Respond(b)
		}()
	}); err != nil {
		t.Fatal(err)
	}
	if err := issuer.Flush(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := newSession(ctx, Config{Hub: srv.ClientURL(), Home: t.TempDir(), Name: "Alice", Workspace: "default", Profile: shell.Profile()})
	t.Cleanup(s.closeAll)
	cctx, ccancel := context.WithTimeout(ctx, connectWait)
	defer ccancel()
	if err := s.connect(cctx); err != nil {
		t.Fatal(err)
	}
	close(joined)
	waitFor(t, "the identity holds the agent's credential", func() error {
		s.link.ident.mu.Lock()
		defer s.link.ident.mu.Unlock()
		if tok := s.link.ident.f.Token; tok != "agent-alice" {
			return fmt.Errorf("token %q", tok)
		}
		return nil
	})
}
