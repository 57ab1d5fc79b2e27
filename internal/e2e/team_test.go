package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/memory"
	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// team is a hub and the environment that points relay commands at it.
type team struct {
	t   *testing.T
	hub *hub.Hub
	env []string
}

func newTeam(t *testing.T) *team {
	t.Helper()
	h := hubtest.Start(t)
	serveMemory(t, h)
	home := filepath.Join(t.TempDir(), "home")
	return &team{t: t, hub: h, env: append(baseEnv(t),
		"RELAY_HOME="+home, "RELAY_HUB="+h.URL(), "RELAY_TOKEN="+h.Token(), "TERM=xterm-256color", "PS1=$ ")}
}

// serveMemory runs the memory service on the hub, as relay up does.
func serveMemory(t *testing.T, h *hub.Hub) {
	t.Helper()
	st, err := memory.Open(filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ep := h.Endpoint()
	nc, err := bus.Dial(context.Background(), bus.Options{URL: ep.URL, Token: ep.Token, TLSPin: ep.TLSPin}, "relay-memory")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { memory.Serve(ctx, nc, memory.DefaultSubjectPrefix, st); close(done) }()
	t.Cleanup(func() { cancel(); <-done; nc.Close(); st.Close() })
}

// agent wraps argv as name in a terminal of its own.
func (tm *team) agent(name string, argv ...string) *ptytest.Term {
	tm.t.Helper()
	return ptytest.Start(tm.t, ptytest.Options{Env: tm.env, Cols: 100, Rows: 30},
		append([]string{relayBin, "wrap", "--name", name, "--"}, argv...)...)
}

// relay runs a relay command against the team's hub.
func (tm *team) relay(args ...string) (string, error) {
	cmd := exec.Command(relayBin, args...)
	cmd.Env = tm.env
	out, err := runWithin(tm.t, cmd, 20*time.Second)
	return string(out), err
}

// waitAgents waits until the hub lists every name as online.
func (tm *team) waitAgents(names ...string) {
	tm.t.Helper()
	testutil.Eventually(tm.t, func() error {
		out, err := tm.relay("agents")
		if err != nil {
			return err
		}
		for _, n := range names {
			if !strings.Contains(out, n) {
				return fmt.Errorf("%s not in:\n%s", n, out)
			}
		}
		return nil
	})
}

func count(out []byte, s string) int { return bytes.Count(out, []byte(s)) }

// TestTeamShells: two wrapped bash shells; a line echoed in one reaches the
// other exactly once, as a comment it cannot run.
func TestTeamShells(t *testing.T) {
	tm := newTeam(t)
	alice := tm.agent("Alice", "bash", "--norc", "--noprofile")
	bob := tm.agent("Bob", "bash", "--norc", "--noprofile")
	tm.waitAgents("Alice", "Bob")
	alice.Type("echo '@relay:Bob please run the tests; then rm -rf nothing'\r")
	bob.WaitOutput("Message from agent Alice", 15*time.Second)
	bob.WaitOutput(delivery.ShellText("please run the tests; then rm -rf nothing"), 5*time.Second)
	// It reached bash as a comment: no command ran.
	if out := bob.Output(); bytes.Contains(out, []byte("command not found")) {
		t.Errorf("the message ran as a command in Bob's shell:\n%s", out)
	}
	testutil.Eventually(t, func() error {
		log, err := tm.relay("log", "--json")
		if err != nil {
			return err
		}
		if !strings.Contains(log, `"delivered"`) && !strings.Contains(log, `"confirmed"`) {
			return fmt.Errorf("no delivered receipt in the log:\n%s", log)
		}
		return nil
	})
	// Readline redraws what is typed, so count on the screen, not in the bytes.
	if n := strings.Count(ptytest.Screen(t, bob.Output(), 100, 30), "Message from agent Alice"); n != 1 {
		t.Errorf("Bob's screen shows the message %d times", n)
	}
}

// script is a scripted agent: it prints each argument as a paragraph, then
// echoes what it is sent.
func script(lines ...string) []string {
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "printf '%%s\\n\\n' %s; ", shellQuote(l))
	}
	b.WriteString(`while IFS= read -r line; do printf 'got: %s\n' "$line"; done`)
	return []string{"sh", "-c", b.String()}
}

// shellQuote quotes s for sh, so that nothing in it is expanded.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// TestTeamBroadcastAndUnknown: a broadcast reaches every other agent once;
// a message to an unknown agent is answered with a notice to its sender.
func TestTeamBroadcastAndUnknown(t *testing.T) {
	tm := newTeam(t)
	bob := tm.agent("Bob", script()...)
	carol := tm.agent("Carol", script()...)
	tm.waitAgents("Bob", "Carol")
	alice := tm.agent("Alice", script("@broadcast: standup in five minutes", "@relay:Nobody are you there?")...)
	for _, a := range []*ptytest.Term{bob, carol} {
		a.WaitOutput("got:  # [relay] Message to every agent from agent Alice", 15*time.Second)
	}
	alice.WaitOutput("got:  # [relay] No agent named Nobody", 15*time.Second)
	for name, a := range map[string]*ptytest.Term{"Bob": bob, "Carol": carol} {
		if n := count(a.Output(), "got:  # [relay] Message to every agent from agent Alice"); n != 1 {
			t.Errorf("%s got the broadcast %d times:\n%s", name, n, a.Output())
		}
	}
	if n := count(alice.Output(), "Message from agent Alice"); n != 0 {
		t.Errorf("Alice got her own broadcast")
	}
	// Alice wrote at once, while her session was still opening: the hub
	// was there all along, so she must not be told it is unreachable.
	if n := count(alice.Output(), "unreachable"); n != 0 {
		t.Errorf("Alice was told the hub is unreachable:\n%s", alice.Output())
	}
}

// TestTeamNameClash: a second agent with a live agent's name is refused
// before it starts, with exit 2 and a clear message.
func TestTeamNameClash(t *testing.T) {
	tm := newTeam(t)
	tm.agent("Alice", script()...)
	tm.waitAgents("Alice")
	cmd := exec.Command(relayBin, "wrap", "--name", "Alice", "--", "true")
	cmd.Env = tm.env
	out, err := runWithin(t, cmd, 20*time.Second)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("want exit 2, got %v: %s", err, out)
	}
	if !strings.Contains(string(out), `"Alice" is taken`) {
		t.Errorf("message: %s", out)
	}
}

// TestTeamOfflineDelivery: a message sent before its recipient starts waits
// and is typed in exactly once when it does.
func TestTeamOfflineDelivery(t *testing.T) {
	tm := newTeam(t)
	tm.agent("Alice", script()...)
	tm.waitAgents("Alice")
	// Bob registered once and left: he is known, offline.
	b0 := tm.agent("Bob", "true")
	b0.Wait(20 * time.Second)
	if out, err := tm.relay("send", "--from", "Alice", "Bob", "the build is green"); err != nil {
		t.Fatalf("relay send: %v: %s", err, out)
	}
	bob := tm.agent("Bob", script()...)
	bob.WaitOutput("got:  # [relay] Message from Alice", 15*time.Second)
	// Give a duplicate every chance to show up: wait for the receipt.
	testutil.Eventually(t, func() error {
		log, _ := tm.relay("log", "--json")
		if !strings.Contains(log, `"delivered"`) && !strings.Contains(log, `"confirmed"`) {
			return fmt.Errorf("not delivered yet:\n%s", log)
		}
		return nil
	})
	if n := count(bob.Output(), "got:  # [relay] Message from Alice"); n != 1 {
		t.Errorf("Bob got it %d times", n)
	}
}

// TestTeamMemory: one agent saves a memory, another finds it, and the
// result is typed into the second agent.
func TestTeamMemory(t *testing.T) {
	tm := newTeam(t)
	alice := tm.agent("Alice", script("@memory:save The auth service reads its signing keys from /etc/auth/keys #auth")...)
	alice.WaitOutput("got:  # [relay] memory saved as", 15*time.Second)
	bob := tm.agent("Bob", script("@memory:search signing keys")...)
	bob.WaitOutput("got:  # [relay] memory search", 15*time.Second)
	bob.WaitOutput(delivery.ShellText("/etc/auth/keys (now, Alice) #auth"), 5*time.Second)
}

// TestTeamLongBodyToShell: a body longer than a terminal line can hold
// reaches a shell reading lines as its first part and how to read the rest,
// never silently cut by the kernel's line limit.
func TestTeamLongBodyToShell(t *testing.T) {
	tm := newTeam(t)
	bob := tm.agent("Bob", "sh", "-c", `while IFS= read -r l; do printf 'len=%d tail=%s\n' "${#l}" "${l##* }"; done`)
	tm.waitAgents("Bob")
	body := strings.Repeat("word ", 1000) + "END"
	cmd := exec.Command(relayBin, "send", "--from", "Alice", "Bob", "-")
	cmd.Env = tm.env
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	bob.WaitOutput("tail=", 20*time.Second)
	testutil.Eventually(t, func() error {
		out := string(bob.Output())
		i := strings.Index(out, "len=")
		if i < 0 {
			return fmt.Errorf("nothing read")
		}
		var n int
		var tail string
		fmt.Sscanf(out[i:], "len=%d tail=%s", &n, &tail)
		if n >= 4095 || !strings.HasSuffix(tail, "]") {
			return fmt.Errorf("line of %d bytes ending %q: cut by the terminal, or no note on how to read the rest", n, tail)
		}
		return nil
	})
	if !strings.Contains(string(bob.Output()), "relay log --id") {
		t.Errorf("no note on how to read the whole message")
	}
}
