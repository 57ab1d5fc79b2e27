package hub

import (
	"context"
	"errors"
	"testing"

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
