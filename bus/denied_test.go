package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestControlRefusedAtOnce: a control request with a credential that may
// not publish on the agent's control subject (an agent's own) fails at
// once with ErrPermission, not after its timeout with ErrNotRunning; the
// hub's token still reaches the wrapper.
func TestControlRefusedAtOnce(t *testing.T) {
	h := startHub(t)
	alice := connect(t, h, "Alice")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go alice.ServeControl(ctx, func(bus.Control) bus.ControlReply { return bus.ControlReply{OK: true, SessionID: "s1"} })
	cred, err := h.Issue(bus.DefaultWorkspace, "Bob")
	if err != nil {
		t.Fatal(err)
	}
	bob := connectOpts(t, bus.Options{URL: h.URL(), Token: cred.Token, InboxPrefix: cred.InboxPrefix, Name: "Bob"})
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	start := time.Now()
	_, err = bob.Control(rctx, "Alice", bus.Control{Op: bus.OpStop})
	if !errors.Is(err, bus.ErrPermission) || errors.Is(err, bus.ErrNotRunning) {
		t.Fatalf("Control with Bob's credential: %v; want ErrPermission", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the refusal took %v", took)
	}
	human := connect(t, h, "")
	var rep bus.ControlReply
	testutil.Eventually(t, func() error {
		var err error
		rep, err = human.Control(rctx, "Alice", bus.Control{Op: bus.OpStop})
		return err
	})
	if rep.SessionID != "s1" {
		t.Errorf("reply %+v", rep)
	}
}

// TestSendRefusedAtOnce: a send under a name the credential does not hold
// (Bob's credential, sending as Impostor) fails at once with ErrPermission
// instead of being retried until its context ends.
func TestSendRefusedAtOnce(t *testing.T) {
	h := startHub(t)
	register(t, h, "Alice")
	cred, err := h.Issue(bus.DefaultWorkspace, "Bob")
	if err != nil {
		t.Fatal(err)
	}
	imp := connectOpts(t, bus.Options{URL: h.URL(), Token: cred.Token, InboxPrefix: cred.InboxPrefix, Name: "Impostor"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err = imp.Send(ctx, "Alice", "hello")
	if !errors.Is(err, bus.ErrPermission) {
		t.Fatalf("send as Impostor with Bob's credential: %v; want ErrPermission", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the refusal took %v", took)
	}
	// Bob's credential still sends as Bob.
	bob := connectOpts(t, bus.Options{URL: h.URL(), Token: cred.Token, InboxPrefix: cred.InboxPrefix, Name: "Bob"})
	if _, err := bob.Send(ctx, "Alice", "hello"); err != nil {
		t.Errorf("send as Bob: %v", err)
	}
}
