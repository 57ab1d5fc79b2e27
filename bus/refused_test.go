package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
)

// TestRefusedCredentialsAreTold: a client whose credential the hub revokes
// is disconnected and refused at every reconnection; nats.go then closes
// the connection for good, and the client says so once through
// OnRefused (nats.go calls the closed handler once), with
// ErrUnauthorized. A client closed by its owner is not refused.
func TestRefusedCredentialsAreTold(t *testing.T) {
	h := startHub(t)
	register(t, h, "Alice")
	cred, err := h.Issue(bus.DefaultWorkspace, "Bob")
	if err != nil {
		t.Fatal(err)
	}
	refused := make(chan error, 4)
	connectOpts(t, bus.Options{URL: h.URL(), Token: cred.Token, InboxPrefix: cred.InboxPrefix, Name: "Bob",
		OnRefused: func(err error) { refused <- err }})

	closedByOwner := make(chan error, 1)
	carol := connect(t, h, "Carol", func(o *bus.Options) { o.OnRefused = func(err error) { closedByOwner <- err } })
	carol.Close()
	select {
	case err := <-closedByOwner:
		t.Errorf("a client closed by its owner was told it was refused: %v", err)
	default:
	}

	if !h.Revoke(bus.DefaultWorkspace, "Bob") {
		t.Fatal("Bob had no credential to revoke")
	}
	select {
	case err := <-refused:
		if !errors.Is(err, bus.ErrUnauthorized) {
			t.Errorf("OnRefused(%v), want ErrUnauthorized", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("OnRefused not called 30 s after the hub revoked the credential")
	}
}

// TestMarkRevoked: the administrator's mark shows the agent offline with
// the time of the revocation, and new credentials claim the name again.
func TestMarkRevoked(t *testing.T) {
	h := startHub(t)
	admin := connect(t, h, "")
	bob := register(t, h, "Bob")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bob.Close()
	if err := admin.MarkRevoked(ctx, "Bob"); err != nil {
		t.Fatal(err)
	}
	list, err := admin.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].State != bus.StateOffline || list[0].Revoked.IsZero() {
		t.Fatalf("agents after the mark: %+v, want Bob offline and revoked", list)
	}
	register(t, h, "Bob")
	if list, err = admin.Agents(ctx); err != nil || len(list) != 1 || list[0].State == bus.StateOffline || !list[0].Revoked.IsZero() {
		t.Fatalf("agents after a new claim: %+v, %v, want Bob live, not revoked", list, err)
	}
}
