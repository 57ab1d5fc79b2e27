package hub

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestCredentialsAcrossRestart: an agent's credential issued before a hub
// restart still works after it (its wrapper reconnects without asking
// again); once revoked it does not, after a restart either.
func TestCredentialsAcrossRestart(t *testing.T) {
	home := t.TempDir()
	start := func() *Hub {
		h, err := Start(context.Background(), Options{Home: home, Listen: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	dial := func(h *Hub, token string) error {
		nc, err := nats.Connect(h.URL(), nats.Token(token), nats.MaxReconnects(0))
		if err == nil {
			nc.Close()
		}
		return err
	}
	h := start()
	cred, err := h.Issue("default", "Alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Issue("default", "bad.name"); !errors.Is(err, ErrBadRequest) {
		t.Errorf("Issue for a name with a dot: %v, want ErrBadRequest", err)
	}
	h.Shutdown()
	h = start()
	if err := dial(h, cred.Token); err != nil {
		t.Fatalf("credential after a restart: %v", err)
	}
	if err := dial(h, h.Token()); err != nil {
		t.Fatalf("admin token after a restart: %v", err)
	}
	h.Revoke("default", "Alice")
	h.Shutdown()
	h = start()
	defer h.Shutdown()
	if err := dial(h, cred.Token); !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("revoked credential after a restart: %v, want an authorization violation", err)
	}
}

// TestIssueAgainRevokes: a new credential for a name (its agent joined
// again) revokes the one before, and closes its connections.
func TestIssueAgainRevokes(t *testing.T) {
	h, err := Start(context.Background(), Options{Home: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Shutdown()
	first, err := h.Issue("default", "Alice")
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(h.URL(), nats.Token(first.Token), nats.MaxReconnects(0))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	second, err := h.Issue("default", "Alice")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the connection made with the first credential is still open")
	}
	if _, err := nats.Connect(h.URL(), nats.Token(first.Token), nats.MaxReconnects(0)); !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("first credential: %v, want an authorization violation", err)
	}
	nc2, err := nats.Connect(h.URL(), nats.Token(second.Token), nats.MaxReconnects(0))
	if err != nil {
		t.Fatalf("second credential: %v", err)
	}
	nc2.Close()
}

// TestWrapperPermissionsExtendAgents: a wrapper's permissions on an
// external server (relay creds issue) are the agent's own and more, never
// fewer, and name no other agent.
func TestWrapperPermissionsExtendAgents(t *testing.T) {
	a, w := AgentPermissions("team", "Bob"), WrapperPermissions("team", "Bob")
	for _, c := range []struct {
		what       string
		agent, wrp []string
	}{
		{"publish", a.Publish.Allow, w.Publish.Allow},
		{"subscribe", a.Subscribe.Allow, w.Subscribe.Allow},
	} {
		for _, s := range c.agent {
			if !slices.Contains(c.wrp, s) {
				t.Errorf("the wrapper may not %s on %q, which the agent may", c.what, s)
			}
		}
		for _, s := range c.wrp {
			// Receipts name a message, not an agent.
			if !slices.Contains(c.agent, s) && !strings.Contains(s, ".Bob") && s != "relay.team.receipt.*" {
				t.Errorf("the wrapper may %s on %q, beyond its name", c.what, s)
			}
		}
	}
	if w.Response == nil || w.Response.MaxMsgs != 1 {
		t.Errorf("a wrapper answers each request it receives once: %+v", w.Response)
	}
}
