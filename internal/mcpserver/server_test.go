package mcpserver

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/delivery"
)

// fakeBus records what the tools send and hold, and serves a fixed log.
type fakeBus struct {
	mu   sync.Mutex
	sent []bus.Message
	held []bus.Message
	log  []bus.Entry
}

func (b *fakeBus) SendMessage(_ context.Context, m bus.Message) (bus.Envelope, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sent = append(b.sent, m)
	return bus.Envelope{ID: "id" + string(rune('a'+len(b.sent))), To: m.To, Body: m.Body}, nil
}

func (b *fakeBus) Hold(_ context.Context, m bus.Message, reason string) (bus.Envelope, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held = append(b.held, m)
	return bus.Envelope{}, nil
}

func (b *fakeBus) Agents(context.Context) ([]bus.Presence, error) { return nil, nil }

func (b *fakeBus) Log(_ context.Context, o bus.LogOptions, fn func(bus.Entry) error) error {
	for _, e := range b.log {
		if o.ID != "" && e.ID != o.ID {
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

func (b *fakeBus) Workspace() string { return "w" }
func (b *fakeBus) Close() error      { return nil }

// client runs a server as Alice over b and returns a connected client.
func client(t *testing.T, b *fakeBus, damping delivery.DamperOptions) *mcp.ClientSession {
	t.Helper()
	s, err := New(Options{Name: "Alice", Agent: true, Workspace: "w", Damping: damping,
		Connect: func(context.Context) (Team, error) { return Team{Bus: b}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Serve(ctx, st); close(done) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	return cs
}

func send(t *testing.T, cs *mcp.ClientSession, to, msg string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "send", Arguments: map[string]any{"to": to, "message": msg}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// TestSendDamped: send goes through the loop damper as @relay: lines do:
// over the pair's budget a message is held (recorded once as held, the
// tool says why), and a repeat within the window is held quietly.
func TestSendDamped(t *testing.T) {
	b := &fakeBus{}
	cs := client(t, b, delivery.DamperOptions{PairMax: 2, PairWindow: time.Minute})
	for i := range 2 {
		if out, isErr := send(t, cs, "Bob", "ping"); isErr || !strings.HasPrefix(out, "Sent to Bob as message") {
			t.Fatalf("send %d: %q, error %v", i+1, out, isErr)
		}
	}
	for i := range 2 {
		out, isErr := send(t, cs, "Bob", "ping")
		if !isErr || !strings.Contains(out, "not sent to Bob") {
			t.Errorf("send %d over the budget: %q, error %v", i+3, out, isErr)
		}
	}
	if len(b.sent) != 2 || len(b.held) != 1 {
		t.Errorf("sent %d, held %d; want 2 sent and 1 held record", len(b.sent), len(b.held))
	}
	// Another peer has its own budget.
	if _, isErr := send(t, cs, "Carol", "ping"); isErr {
		t.Error("a message to Carol was held by Bob's budget")
	}
}

// TestSendHops: a message to a peer that wrote to this agent lately
// answers it: one more hop, and reply-to set; past the hop limit it is
// held.
func TestSendHops(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		name   string
		log    []bus.Entry
		hops   int
		reply  string
		isHeld bool
	}{
		{"fresh", nil, 0, "", false},
		{"an answer", []bus.Entry{{Envelope: bus.Envelope{ID: "m1", From: "Bob", To: "Alice", Hops: 2, Created: now}}}, 3, "m1", false},
		{"a broadcast answered", []bus.Entry{{Envelope: bus.Envelope{ID: "m2", From: "Bob", To: "*", Hops: 0, Created: now}}}, 1, "m2", false},
		{"past the limit", []bus.Entry{{Envelope: bus.Envelope{ID: "m3", From: "Bob", To: "Alice", Hops: 3, Created: now}}}, 0, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &fakeBus{log: c.log}
			cs := client(t, b, delivery.DamperOptions{MaxHops: 3})
			out, isErr := send(t, cs, "Bob", "the tests pass")
			if isErr != c.isHeld {
				t.Fatalf("%q, error %v; want held %v", out, isErr, c.isHeld)
			}
			if c.isHeld {
				if len(b.held) != 1 || len(b.sent) != 0 {
					t.Errorf("held %d, sent %d", len(b.held), len(b.sent))
				}
				return
			}
			if m := b.sent[0]; m.Hops != c.hops || m.ReplyTo != c.reply || m.Body != "the tests pass" {
				t.Errorf("sent %+v, want hops %d, reply-to %q", m, c.hops, c.reply)
			}
		})
	}
}

// TestSendWait: send with wait returns the stage each recipient reached,
// the answer's text once answered, and where it waits when it did not.
func TestSendWait(t *testing.T) {
	at := time.Now()
	entry := func(st bus.Status, reason string, stages ...bus.Stage) bus.Entry {
		return bus.Entry{Envelope: bus.Envelope{ID: "idb", To: "Bob"}, Status: map[string]bus.Status{"Bob": st},
			Reasons: map[string]string{"Bob": reason}, Stages: stages}
	}
	for _, c := range []struct {
		name, wait string
		log        []bus.Entry
		want       string
		isErr      bool
	}{
		{"answered", "answered", []bus.Entry{entry(bus.StatusAnswered, "by m9",
			bus.Stage{Agent: "Bob", Stage: bus.StatusAnswered, At: at, Reason: "by m9", Answer: "forty-two", AnswerID: "m9"})},
			"Sent to Bob as message idb; answered: Bob answered (message m9): forty-two.", false},
		{"seen", "seen", []bus.Entry{entry(bus.StatusSeen, "in the prompt")},
			"Sent to Bob as message idb; seen: Bob seen (in the prompt).", false},
		{"held", "seen", []bus.Entry{entry(bus.StatusHeld, "busy: it goes in when the agent's turn ends")},
			"Sent to Bob as message idb; not seen within 1s: Bob held (busy: it goes in when the agent's turn ends).", false},
		{"a stage that cannot be awaited", "queued", nil, "wait \"queued\": want delivered, seen or answered", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := client(t, &fakeBus{log: c.log}, delivery.DamperOptions{})
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "send",
				Arguments: map[string]any{"to": "Bob", "message": "what is 6*7?", "wait": c.wait, "timeout_s": 1}})
			if err != nil {
				t.Fatal(err)
			}
			if out := res.Content[0].(*mcp.TextContent).Text; out != c.want || res.IsError != c.isErr {
				t.Errorf("%q (error %v), want %q (error %v)", out, res.IsError, c.want, c.isErr)
			}
		})
	}
}
