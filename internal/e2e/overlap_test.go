package e2e

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/ptytest"
)

// TestOverlappedStartNameClash: relay wrap --name Alice starts its agent
// while the hub answers the name claim (issue 34), and with a live Alice
// the session is still refused before anything the agent wrote reaches a
// peer. The hub is reached through a gate that holds the wrapper's bytes
// until the human's terminal shows the agent's first line, an @relay line
// to Bob: so the agent has run and written before the claim could be
// answered, on every run. Then the wrapper exits 2 saying the name is
// taken, and Bob's log has nothing from Alice. (Before the overlapped start
// the agent never ran: the line never showed.)
func TestOverlappedStartNameClash(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	tm.agent("Alice", script()...)
	tm.agent("Bob", script()...)
	tm.waitAgents("Alice", "Bob")

	g := newHubGate(t, strings.TrimPrefix(tm.hub.URL(), "nats://"))
	env := append(append([]string{}, tm.env...), "RELAY_HUB=nats://"+g.addr())
	second := ptytest.Start(t, ptytest.Options{Env: env, Cols: 100, Rows: 30},
		relayBin, "wrap", "--name", "Alice", "--", "sh", "-c", `printf '@relay:Bob clash-%s\n\n' marker; exec sleep 30`)
	if err := second.WaitFor(60*time.Second, func(raw []byte) bool {
		return strings.Contains(string(raw), "@relay:Bob clash-marker")
	}); err != nil {
		t.Fatalf("the agent's first line is not on the human's terminal while the claim waits: %v\n%s", err, second.Output())
	}
	g.open()
	code := second.Wait(60 * time.Second)
	if out := string(second.Output()); code != 2 || !strings.Contains(out, `"Alice" is taken`) {
		t.Fatalf("the second Alice exited %d, want 2 and the name taken:\n%s", code, out)
	}
	for _, b := range tm.sentBy("Alice") {
		if strings.Contains(b, "clash-marker") {
			t.Fatalf("the refused agent's line reached the hub: %q", b)
		}
	}
}

// hubGate is a TCP relay to the hub that holds what clients send until
// open: a client reaches the hub, but nothing it asks is answered before.
type hubGate struct {
	ln     net.Listener
	opened chan struct{}
	once   sync.Once
}

func newHubGate(t *testing.T, hubAddr string) *hubGate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &hubGate{ln: ln, opened: make(chan struct{})}
	t.Cleanup(func() { ln.Close(); g.open() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h, err := net.Dial("tcp", hubAddr)
			if err != nil {
				c.Close()
				continue
			}
			go func() { _, _ = io.Copy(c, h); c.Close() }()
			go func() {
				<-g.opened
				_, _ = io.Copy(h, c)
				h.Close()
			}()
		}
	}()
	return g
}

func (g *hubGate) addr() string { return g.ln.Addr().String() }
func (g *hubGate) open()        { g.once.Do(func() { close(g.opened) }) }
