package e2e

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/ptytest"
)

// TestOverlappedStartNameClash: relay wrap --name Alice starts its agent
// while the hub answers the name claim (issue 34), and with a live Alice
// the session is still refused before anything the agent wrote reaches a
// peer. The hub is reached through a gate that holds the wrapper's claim
// of the name until the human's terminal shows the agent's first line, an
// @relay line to Bob: so the agent has run and written before the claim
// could be answered, on every run. Then the wrapper exits 2 saying the name is
// taken, and Bob's log has nothing from Alice. (Before the overlapped start
// the agent never ran: the line never showed.)
func TestOverlappedStartNameClash(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	tm.agent("Alice", script()...)
	tm.agent("Bob", script()...)
	tm.waitAgents("Alice", "Bob")

	g := newHubGate(t, strings.TrimPrefix(tm.hub.URL(), "nats://"), bus.ClaimSubject("default", "Alice"))
	env := append(append([]string{}, tm.env...), "RELAY_HUB=nats://"+g.addr())
	// A SessionStart hook of the project: a refused session is no session,
	// so it must not fire.
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, ".relay"), 0o755); err != nil {
		t.Fatal(err)
	}
	hook := "[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ncommand = 'touch session-started'\n"
	if err := os.WriteFile(filepath.Join(project, ".relay", "config.toml"), []byte(hook), 0o644); err != nil {
		t.Fatal(err)
	}
	second := ptytest.Start(t, ptytest.Options{Env: env, Cols: 100, Rows: 30, Dir: project},
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
	if _, err := os.Stat(filepath.Join(project, "session-started")); err == nil {
		t.Errorf("the refused session fired its SessionStart hook")
	}
	for _, b := range tm.sentBy("Alice") {
		if strings.Contains(b, "clash-marker") {
			t.Fatalf("the refused agent's line reached the hub: %q", b)
		}
	}
}

// hubGate is a TCP relay to the hub that passes a client's traffic until
// the client first names the subject hold (the claim of a name), and the
// rest of it only once open was called: the client connects, finds its
// streams, and waits for the claim's answer.
type hubGate struct {
	ln     net.Listener
	hold   []byte
	opened chan struct{}
	once   sync.Once
}

func newHubGate(t *testing.T, hubAddr, hold string) *hubGate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &hubGate{ln: ln, hold: []byte(" " + hold + " "), opened: make(chan struct{})}
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
			go func() { g.pass(h, c); h.Close() }()
		}
	}()
	return g
}

// pass copies from to to, holding everything from the first hold on until
// the gate opens. A part of hold may pass before: the hub acts on a whole
// line only.
func (g *hubGate) pass(to io.Writer, from io.Reader) {
	var tail []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			seen := append(tail, chunk...)
			if i := bytes.Index(seen, g.hold); i >= 0 {
				cut := max(0, i-len(tail))
				if _, err := to.Write(chunk[:cut]); err != nil {
					return
				}
				<-g.opened
				if _, err := to.Write(chunk[cut:]); err != nil {
					return
				}
				_, _ = io.Copy(to, from)
				return
			}
			if _, err := to.Write(chunk); err != nil {
				return
			}
			tail = append([]byte{}, seen[max(0, len(seen)-len(g.hold)):]...)
		}
		if err != nil {
			return
		}
	}
}

func (g *hubGate) addr() string { return g.ln.Addr().String() }
func (g *hubGate) open()        { g.once.Do(func() { close(g.opened) }) }
