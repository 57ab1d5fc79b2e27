package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/ptytest"
)

// TestHandlerChainsFromSubfolder (issue 23): an agent started in a
// subfolder of the project runs the project's handlers as configured: a
// relative script resolved from the project root, two [[patterns.deploy]]
// handlers in order, placeholder-looking commands of user namespaces, and
// an override of the built-in memory namespace.
func TestHandlerChainsFromSubfolder(t *testing.T) {
	tm := newTeam(t)
	dir := project(t, `
[[patterns.deploy]]
command = ["./scripts/relay-deploy.sh"]

[[patterns.deploy]]
command = 'echo "then the second deploy handler"'

[patterns.notify]
command = 'echo "notified: $RELAY_TARGET $RELAY_MESSAGE"'

[[patterns.memory]]
override = true
command = 'echo "my own memory has nothing on $RELAY_MESSAGE"'
`)
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts", "relay-deploy.sh"), []byte("#!/bin/sh\necho \"the deploy script ran for $RELAY_TARGET\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "src", "app")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	agent := ptytest.Start(t, ptytest.Options{Env: tm.env, Dir: sub, Cols: 120, Rows: 30},
		append([]string{relayBin, "wrap", "--name", "Alice", "--"},
			script("@deploy:staging [v1.2.3]", "@notify:text build is green", "@memory:search signing keys")...)...)
	agent.WaitOutput("got:  # [relay] the deploy script ran for staging", 20*time.Second)
	agent.WaitOutput("got:  # [relay] then the second deploy handler", 10*time.Second)
	agent.WaitOutput("got:  # [relay] notified: text build is green", 10*time.Second)
	agent.WaitOutput("got:  # [relay] my own memory has nothing on signing keys", 10*time.Second)
	out := agent.Output()
	if bytes.Index(out, []byte("the deploy script ran")) > bytes.Index(out, []byte("then the second deploy handler")) {
		t.Errorf("the deploy handlers ran out of order:\n%s", out)
	}
	for _, never := range []string{"no such file", "failed", "@memory is unavailable"} {
		if bytes.Contains(out, []byte(never)) {
			t.Errorf("the agent was told %q:\n%s", never, out)
		}
	}
}
