package bus_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/testutil"
)

func TestDirectAndBroadcast(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	bob := register(t, h, "bob")
	carol := register(t, h, "carol")
	var ab, bb, cb collector
	inbox(t, alice, &ab)
	inbox(t, bob, &bb)
	inbox(t, carol, &cb)
	ctx := context.Background()

	env, err := alice.Send(ctx, "bob", "run the tests")
	if err != nil {
		t.Fatal(err)
	}
	bb.waitBodies(t, "run the tests")
	got := bb.deliveries()[0]
	if got.Envelope.ID != env.ID || got.Envelope.From != "alice" || got.Envelope.To != "bob" ||
		got.Envelope.Workspace != "default" || got.Envelope.Kind != bus.KindMessage || got.NumDelivered != 1 {
		t.Errorf("bob got %+v, want the envelope alice sent (%+v), first delivery", got, env)
	}

	if _, err := bob.Send(ctx, bus.Broadcast, "deploy freeze at 17:00"); err != nil {
		t.Fatal(err)
	}
	ab.waitBodies(t, "deploy freeze at 17:00")
	cb.waitBodies(t, "deploy freeze at 17:00")
	if d := ab.deliveries()[0]; d.Envelope.To != "*" || d.Envelope.From != "bob" {
		t.Errorf("broadcast copy: to %q from %q, want * from bob", d.Envelope.To, d.Envelope.From)
	}
	bb.waitBodies(t, "run the tests") // the sender does not get its own broadcast
}

func TestWorkspacesDoNotMix(t *testing.T) {
	h := startHub(t)
	inWS := func(ws string) func(*bus.Options) { return func(o *bus.Options) { o.Workspace = ws } }
	a1 := register(t, h, "alice", inWS("one"))
	b1 := register(t, h, "bob", inWS("one"))
	b2 := register(t, h, "bob", inWS("two")) // the same name in another workspace is fine
	var c1, c2 collector
	inbox(t, b1, &c1)
	inbox(t, b2, &c2)
	if _, err := a1.Send(context.Background(), "bob", "for one"); err != nil {
		t.Fatal(err)
	}
	if _, err := a1.Send(context.Background(), "*", "all of one"); err != nil {
		t.Fatal(err)
	}
	c1.waitBodies(t, "for one", "all of one")
	agents, err := b2.Agents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(agents) != 1 || agents[0].Name != "bob" || agents[0].Pending != 0 {
		t.Errorf("workspace two lists %+v, want only bob with nothing pending", agents)
	}
	if got := c2.bodies(); len(got) != 0 {
		t.Errorf("bob of workspace two got %q", got)
	}
}

func TestUnknownAgentIsToldAndMessageWaits(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	register(t, h, "Bob")
	env, err := alice.Send(context.Background(), "bob", "are you there?")
	if !errors.Is(err, bus.ErrUnknownAgent) {
		t.Fatalf("send to a never-registered agent: err %v, want ErrUnknownAgent", err)
	}
	if !strings.Contains(err.Error(), `did you mean "Bob"`) || env.ID == "" {
		t.Errorf("error %q should suggest Bob; envelope %+v should be valid", err, env)
	}
	// The message waits: the agent joins later and gets it.
	late := register(t, h, "bob")
	var col collector
	inbox(t, late, &col)
	col.waitBodies(t, "are you there?")
	if _, err := alice.Send(context.Background(), "bob", "welcome"); err != nil {
		t.Errorf("send to bob once registered: %v", err)
	}
}

func TestBroadcastWithNobodyElse(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	if _, err := alice.Send(context.Background(), "*", "hello?"); !errors.Is(err, bus.ErrNoRecipients) {
		t.Fatalf("broadcast alone: err %v, want ErrNoRecipients", err)
	}
}

func TestNameClash(t *testing.T) {
	h := startHub(t)
	fast := func(o *bus.Options) { o.Heartbeat = 100 * time.Millisecond }
	first := register(t, h, "bob", fast)
	second := connect(t, h, "bob", fast)
	err := second.Register(context.Background())
	if !errors.Is(err, bus.ErrNameTaken) || !strings.Contains(err.Error(), "choose another name") {
		t.Fatalf("second bob: err %v, want ErrNameTaken with advice", err)
	}
	// A clean exit frees the name at once.
	first.Close()
	if err := second.Register(context.Background()); err != nil {
		t.Fatalf("register after the first bob closed: %v", err)
	}
	// A crash (connection gone, no goodbye) frees it after missed heartbeats.
	second.Conn().Close()
	third := connect(t, h, "bob", fast)
	testutil.Eventually(t, func() error { return third.Register(context.Background()) })
}

func TestPresenceStates(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	bob := register(t, h, "bob", func(o *bus.Options) { o.Heartbeat = 100 * time.Millisecond })
	ctx := context.Background()
	if err := alice.SetState(ctx, bus.StateBusy); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := bob.Send(ctx, "alice", "queued while busy"); err != nil {
			t.Fatal(err)
		}
	}
	agents, err := alice.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(agents) != 2 || agents[0].Name != "alice" || agents[0].State != bus.StateBusy || agents[0].Pending != 3 ||
		agents[1].Name != "bob" || agents[1].State != bus.StateStarting {
		t.Fatalf("agents = %+v, want alice busy with 3 pending, bob starting", agents)
	}
	bob.Conn().Close() // crash
	testutil.Eventually(t, func() error {
		agents, err := alice.Agents(ctx)
		if err != nil {
			return err
		}
		if agents[1].State != bus.StateOffline {
			return testutil.Errorf("bob is %s, want offline after missed heartbeats", agents[1].State)
		}
		return nil
	})
	if err := connect(t, h, "nobody").SetState(ctx, bus.StateIdle); !errors.Is(err, bus.ErrNotRegistered) {
		t.Errorf("SetState before Register: %v, want ErrNotRegistered", err)
	}
}

func TestSendRefusesBadInput(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	register(t, h, "bob")
	ctx := context.Background()
	for _, tc := range []struct {
		name, to, body string
		want           error
	}{
		{"oversize", "bob", strings.Repeat("x", bus.MaxBody+1), bus.ErrBodyTooLarge},
		{"invalid UTF-8", "bob", "caf\xe9", bus.ErrInvalidEnvelope},
		{"empty body", "bob", "", bus.ErrInvalidEnvelope},
		{"bad target", "bob.smith", "hi", bus.ErrBadName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := alice.Send(ctx, tc.to, tc.body); !errors.Is(err, tc.want) {
				t.Errorf("Send(%q, %.10q…) = %v, want %v", tc.to, tc.body, err, tc.want)
			}
		})
	}
	if _, err := alice.Send(ctx, "bob", strings.Repeat("é", bus.MaxBody/2)); err != nil {
		t.Errorf("a body of exactly MaxBody bytes: %v", err)
	}
	if _, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: h.Token(), Name: "a.b"}); !errors.Is(err, bus.ErrBadName) {
		t.Errorf("connect as a.b: %v, want ErrBadName", err)
	}
	if _, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: "wrong", Name: "a"}); !errors.Is(err, bus.ErrUnauthorized) {
		t.Errorf("connect with a wrong token: %v, want ErrUnauthorized", err)
	}
}
