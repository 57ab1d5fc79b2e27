package e2e

import (
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/testing/ptytest"
)

// TestHubGoesAway: while the hub is down, the wrapped agent keeps working
// and what it sends waits (it is told so); when the hub is back on the same
// address, the message goes out and reaches its peer, once.
func TestHubGoesAway(t *testing.T) {
	hubHome := filepath.Join(t.TempDir(), "hub")
	h := hubtest.StartAt(t, hubHome, "127.0.0.1:0")
	u, _ := url.Parse(h.URL())
	addr := u.Host
	env := append(baseEnv(t), "RELAY_HOME="+filepath.Join(t.TempDir(), "home"), "RELAY_HUB="+h.URL(),
		"RELAY_TOKEN="+h.Token(), "TERM=xterm-256color", "PS1=$ ")
	tm := &team{t: t, hub: h, env: env}
	alice := ptytest.Start(t, ptytest.Options{Env: env, Cols: 100, Rows: 30}, relayBin, "wrap", "--name", "Alice", "--", "bash", "--norc", "--noprofile")
	bob := ptytest.Start(t, ptytest.Options{Env: env, Cols: 100, Rows: 30}, append([]string{relayBin, "wrap", "--name", "Bob", "--"}, script()...)...)
	tm.waitAgents("Alice", "Bob")

	h.Shutdown()
	alice.Type("echo '@relay:Bob written while the hub was down'\r")
	alice.WaitOutput("written while the hub was down", 10*time.Second)
	alice.Type("echo still working\r") // the agent's terminal goes on as usual
	alice.WaitOutput("\rstill working\r\n", 10*time.Second)

	h2 := hubtest.StartAt(t, hubHome, addr) // the same storage and address
	tm.hub = h2
	bob.WaitOutput("got:  # [relay] Message from agent Alice", 60*time.Second)
	bob.WaitOutput("written while the hub was down", 5*time.Second)
	if n := count(bob.Output(), "got:  # [relay] Message from agent Alice"); n != 1 {
		t.Errorf("Bob got it %d times", n)
	}
}

// TestHubNotUpYet: an agent started while its hub is down works alone, and
// what it sends meanwhile waits (it is told so, once); when the hub comes
// up, the message goes out and reaches its peer, once.
// readLines returns the lines a script() program read, from its output:
// each "got: " up to its line's end.
func readLines(out []byte) []string {
	var lines []string
	for rest := string(out); ; {
		i := strings.Index(rest, "got: ")
		if i < 0 {
			return lines
		}
		rest = rest[i+len("got: "):]
		line, after, ok := strings.Cut(rest, "\n")
		if !ok {
			return lines // not ended yet
		}
		lines = append(lines, strings.TrimRight(line, "\r"))
		rest = after
	}
}

func TestHubNotUpYet(t *testing.T) {
	hubHome := filepath.Join(t.TempDir(), "hub")
	h := hubtest.StartAt(t, hubHome, "127.0.0.1:0")
	u, _ := url.Parse(h.URL())
	env := append(baseEnv(t), "RELAY_HOME="+filepath.Join(t.TempDir(), "home"), "RELAY_HUB="+h.URL(),
		"RELAY_TOKEN="+h.Token(), "TERM=xterm-256color", "PS1=$ ")
	h.Shutdown()

	alice := ptytest.Start(t, ptytest.Options{Env: env, Cols: 100, Rows: 30},
		append([]string{relayBin, "wrap", "--name", "Alice", "--"}, script("@relay:Bob sent before the hub was up", "@relay:Bob and a second one")...)...)
	alice.WaitOutput("got:  # [relay] "+delivery.ShellText("The hub is unreachable; your message to Bob waits"), 30*time.Second)

	h2 := hubtest.StartAt(t, hubHome, u.Host) // the same storage and address
	tm := &team{t: t, hub: h2, env: env}
	bob := tm.agent("Bob", script()...)
	// What Bob's program read (its "got: " lines), not the terminal's
	// echo of what relay typed: the two are interleaved however the
	// terminal pleases when relay types both lines at once.
	bodies := func(out []byte) []string {
		var got []string
		for _, l := range readLines(out) {
			if body, ok := shellBody(l); ok {
				got = append(got, body)
			}
		}
		return got
	}
	if err := bob.WaitFor(30*time.Second, func(out []byte) bool { return len(bodies(out)) >= 2 }); err != nil {
		t.Fatalf("Bob read %q, want both messages: %v\n%s", bodies(bob.Output()), err, bob.Output())
	}
	if got := bodies(bob.Output()); !slices.Equal(got, []string{"sent before the hub was up", "and a second one"}) {
		t.Errorf("Bob read %q, want each message once, in order:\n%s", got, bob.Output())
	}
	if n := count(alice.Output(), "got:  # [relay] The hub is unreachable"); n != 1 {
		t.Errorf("Alice was told %d times that the hub is unreachable, want once:\n%s", n, alice.Output())
	}
}
