package e2e

import (
	"bytes"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/relayhq/relay/hub/hubtest"
	"github.com/relayhq/relay/internal/ptytest"
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
	bob.WaitOutput("got: # [relay] Message from agent Alice", 60*time.Second)
	bob.WaitOutput("written while the hub was down", 5*time.Second)
	if n := count(bob.Output(), "got: # [relay] Message from agent Alice"); n != 1 {
		t.Errorf("Bob got it %d times", n)
	}
}

// TestHubNotUpYet: an agent started while its hub is down works alone, and
// what it sends meanwhile waits (it is told so, once); when the hub comes
// up, the message goes out and reaches its peer, once.
func TestHubNotUpYet(t *testing.T) {
	hubHome := filepath.Join(t.TempDir(), "hub")
	h := hubtest.StartAt(t, hubHome, "127.0.0.1:0")
	u, _ := url.Parse(h.URL())
	env := append(baseEnv(t), "RELAY_HOME="+filepath.Join(t.TempDir(), "home"), "RELAY_HUB="+h.URL(),
		"RELAY_TOKEN="+h.Token(), "TERM=xterm-256color", "PS1=$ ")
	h.Shutdown()

	alice := ptytest.Start(t, ptytest.Options{Env: env, Cols: 100, Rows: 30},
		append([]string{relayBin, "wrap", "--name", "Alice", "--"}, script("@relay:Bob sent before the hub was up", "@relay:Bob and a second one")...)...)
	alice.WaitOutput("got: # [relay] The hub is unreachable; your message to Bob waits", 30*time.Second)

	h2 := hubtest.StartAt(t, hubHome, u.Host) // the same storage and address
	tm := &team{t: t, hub: h2, env: env}
	bob := tm.agent("Bob", script()...)
	bob.WaitOutput("⏎ and a second one\r\ngot: ", 30*time.Second)
	out := bob.Output()
	if n := count(out, "⏎ sent before the hub was up\r\ngot: "); n != 1 {
		t.Errorf("Bob got the first message %d times:\n%s", n, out)
	}
	if i, j := bytes.Index(out, []byte("sent before the hub")), bytes.Index(out, []byte("and a second one")); i > j {
		t.Errorf("Bob got them out of order:\n%s", out)
	}
	if n := count(alice.Output(), "got: # [relay] The hub is unreachable"); n != 1 {
		t.Errorf("Alice was told %d times that the hub is unreachable, want once:\n%s", n, alice.Output())
	}
}
