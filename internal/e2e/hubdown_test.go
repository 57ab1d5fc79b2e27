package e2e

import (
	"net/url"
	"os"
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
	env := append(os.Environ(), "RELAY_HOME="+filepath.Join(t.TempDir(), "home"), "RELAY_HUB="+h.URL(),
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
