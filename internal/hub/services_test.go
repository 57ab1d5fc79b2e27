package hub_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// A service the hub serves beside NATS (relay up's memory) is live before
// hub.json names the hub, and stops while the server still runs: a client
// that finds the hub never finds it without its services.
func TestServicesLiveBeforeTheRecord(t *testing.T) {
	home := testutil.Home(t)
	var events []string
	h := start(t, hub.Options{Home: home, Listen: "127.0.0.1:0",
		Services: func(h *hub.Hub) (func(), error) {
			if ep, err := hub.Find(home); err == nil {
				t.Errorf("the hub was recorded (%s) before its services started", ep.URL)
			}
			nc, err := nats.Connect(h.URL(), nats.Token(h.Token()))
			if err != nil {
				return nil, err
			}
			if _, err := nc.Subscribe("svc.echo", func(m *nats.Msg) { _ = m.Respond(m.Data) }); err != nil {
				return nil, err
			}
			if err := nc.Flush(); err != nil {
				return nil, err
			}
			events = append(events, "started")
			return func() {
				if !h.Server().Running() {
					t.Error("the server stopped before its services")
				}
				events = append(events, "stopped")
				nc.Close()
			}, nil
		}})
	ep, err := hub.Find(home)
	if err != nil {
		t.Fatalf("Find after Start: %v", err)
	}
	nc, err := nats.Connect(ep.URL, nats.Token(ep.Token))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if m, err := nc.Request("svc.echo", []byte("hi"), 5*time.Second); err != nil || string(m.Data) != "hi" {
		t.Fatalf("the service on the hub Find named: %v, %v", m, err)
	}
	h.Shutdown()
	h.Shutdown()
	if got := strings.Join(events, ","); got != "started,stopped" {
		t.Errorf("services: %s, want started,stopped once each", got)
	}
}

// A service that does not start stops the hub: Start says why and leaves
// no record of a hub running.
func TestServicesFailureStopsTheHub(t *testing.T) {
	home := testutil.Home(t)
	boom := errors.New("memory store is locked")
	_, err := hub.Start(context.Background(), hub.Options{Home: home, Listen: "127.0.0.1:0",
		Services: func(*hub.Hub) (func(), error) { return nil, boom }})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "start hub") {
		t.Fatalf("Start = %v, want start hub: %v", err, boom)
	}
	if _, err := hub.Find(home); !errors.Is(err, hub.ErrNoHub) {
		t.Errorf("Find after a failed start: %v, want ErrNoHub", err)
	}
	// The lock was released: a hub starts on the same home.
	start(t, hub.Options{Home: home, Listen: "127.0.0.1:0"})
}
