package e2e

import (
	"context"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestTeamOverTLS: a team hub that speaks TLS with a certificate from the
// team's CA for the machine's name ("localhost" here). Alice runs on the
// hub's machine and finds it through RELAY_HOME; Bob runs as if on another
// machine, dialling it by name with the CA. A message goes each way, once,
// and a memory saved by one is found by the other.
func TestTeamOverTLS(t *testing.T) {
	files := testutil.TLS(t, "localhost")
	hubHome := filepath.Join(t.TempDir(), "hub")
	h, err := hub.Start(context.Background(), hub.Options{Home: hubHome, Listen: "127.0.0.1:0", TLSCert: files.Cert, TLSKey: files.Key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	serveMemory(t, h)
	u, _ := url.Parse(h.URL())
	local := append(baseEnv(t), "RELAY_HOME="+hubHome, "TERM=xterm-256color", "PS1=$ ")
	remote := append(baseEnv(t), "RELAY_HOME="+filepath.Join(t.TempDir(), "home"), "RELAY_HUB=tls://localhost:"+u.Port(),
		"RELAY_TOKEN="+h.Token(), "RELAY_TLS_CA="+files.CA, "TERM=xterm-256color", "PS1=$ ")
	tm := &team{t: t, hub: h, env: remote}

	alice := ptytest.Start(t, ptytest.Options{Env: local, Cols: 100, Rows: 30}, relayBin, "wrap", "--name", "Alice", "--", "bash", "--norc", "--noprofile")
	tm.waitAgents("Alice")
	bob := ptytest.Start(t, ptytest.Options{Env: remote, Cols: 100, Rows: 30},
		append([]string{relayBin, "wrap", "--name", "Bob", "--"}, script("@relay:Alice hello from the other machine", "@memory:save the staging hub speaks TLS")...)...)
	tm.waitAgents("Alice", "Bob")
	alice.WaitOutput("hello from the other machine", 15*time.Second)
	bob.WaitOutput("got:  # [relay] memory saved as", 15*time.Second)
	alice.Type("echo '@relay:Bob hello from the hub machine'\r")
	bob.WaitOutput("got:  # [relay] Message from agent Alice", 15*time.Second)
	alice.Type("echo '@memory:search staging hub'\r")
	alice.WaitOutput(delivery.ShellText("the staging hub speaks TLS ("), 15*time.Second)

	// Refused for good: the wrapper says why and does not start the agent
	// cut off from its team.
	for _, tc := range []struct{ name, drop, add, want string }{
		{"no CA", "RELAY_TLS_CA=", "", "hub.tls_ca, RELAY_TLS_CA or --tls-ca"},
		{"wrong token", "RELAY_TOKEN=", "RELAY_TOKEN=wrong", "check RELAY_TOKEN"},
	} {
		var env []string
		for _, kv := range remote {
			if !strings.HasPrefix(kv, tc.drop) {
				env = append(env, kv)
			}
		}
		if tc.add != "" {
			env = append(env, tc.add)
		}
		cmd := exec.Command(relayBin, "wrap", "--name", "Carol", "--", "sh", "-c", "echo the agent started")
		cmd.Env = env
		out, err := runWithin(t, cmd, 20*time.Second)
		if err == nil || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "the agent started") {
			t.Errorf("%s: wrap ended with %v, printed %q; want an error saying %q before the agent starts", tc.name, err, out, tc.want)
		}
	}

	if n := count(bob.Output(), "got:  # [relay] Message from agent Alice"); n != 1 {
		t.Errorf("Bob got Alice's message %d times", n)
	}
	if n := strings.Count(ptytest.Screen(t, alice.Output(), 100, 30), "hello from the other machine"); n != 1 {
		t.Errorf("Alice's screen shows Bob's message %d times", n)
	}
}
