package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// project makes a project folder holding .relay/config.toml with toml.
func project(t *testing.T, toml string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(filepath.Join(dir, ".relay"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".relay", "config.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, ".git"), 0o755) // the project search stops here
	return dir
}

// TestUserNamespace: a wrapped agent prints `@deploy:staging Release
// v1.2.3`; the configured handler gets the command as data (JSON on stdin,
// RELAY_* variables), and its answer is typed back into the agent.
func TestUserNamespace(t *testing.T) {
	tm := newTeam(t)
	out := filepath.Join(t.TempDir(), "deploy-input.json")
	pwned := filepath.Join(t.TempDir(), "PWNED")
	dir := project(t, fmt.Sprintf(`
[patterns.deploy]
command = 'cat > "%s"; echo "Deployed to $RELAY_TARGET"' 
timeout = "10s"
`, out))
	body := fmt.Sprintf("Release v1.2.3 $(touch %s) `touch %s`", pwned, pwned)
	agent := ptytest.Start(t, ptytest.Options{Env: tm.env, Dir: dir, Cols: 100, Rows: 30},
		append([]string{relayBin, "wrap", "--name", "Alice", "--"}, script("@deploy:staging "+body)...)...)
	agent.WaitOutput("got:  # [relay] Deployed to staging", 20*time.Second)

	var in struct{ Namespace, Target, Body, Agent, Workspace, Cwd, Session_ID string }
	testutil.Eventually(t, func() error {
		b, err := os.ReadFile(out)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, &in)
	})
	if in.Namespace != "deploy" || in.Target != "staging" || in.Body != body || in.Agent != "Alice" {
		t.Errorf("handler input %+v", in)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the body ran as a shell command")
	}
}

// TestMessageReceivedRefuses: a MessageReceived hook that exits 2 refuses
// messages from one sender: nothing is typed in, and the sender's message
// is marked failed with the hook's reason.
func TestMessageReceivedRefuses(t *testing.T) {
	tm := newTeam(t)
	dir := project(t, `
[[hooks.MessageReceived]]
matcher = "Mallory"
[[hooks.MessageReceived.hooks]]
type = "command"
command = "echo 'Mallory is muted here' >&2; exit 2"
`)
	bob := ptytest.Start(t, ptytest.Options{Env: tm.env, Dir: dir, Cols: 100, Rows: 30},
		append([]string{relayBin, "wrap", "--name", "Bob", "--"}, script()...)...)
	tm.waitAgents("Bob")
	if out, err := tm.relay("send", "--from", "Mallory", "Bob", "buy my coin"); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	if out, err := tm.relay("send", "--from", "Alice", "Bob", "standup now"); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	// Alice is no agent here but a person sending with relay send.
	bob.WaitOutput("got:  # [relay] Message from Alice (a human, not an agent)", 20*time.Second)
	testutil.Eventually(t, func() error {
		log, _ := tm.relay("log", "--json")
		if !strings.Contains(log, "Mallory is muted here") {
			return fmt.Errorf("no failed receipt with the reason:\n%s", log)
		}
		return nil
	})
	if strings.Contains(string(bob.Output()), "buy my coin") {
		t.Errorf("the refused message was typed in:\n%s", bob.Output())
	}
}

// TestGoExample: examples/deploy, a Go program on the relay API, handles
// @deploy: itself and types its answer back.
func TestGoExample(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "deploy")
	build := exec.Command("go", "build", "-o", bin, "github.com/relayhq/relay/examples/deploy")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build examples/deploy: %v\n%s", err, out)
	}
	agent := ptytest.Start(t, ptytest.Options{Env: env(t)}, append([]string{bin, "--"}, script("@deploy:staging Release v1.2.3")...)...)
	agent.WaitOutput("got:  # [relay] Deployed Release v1.2.3 to staging.", 20*time.Second)
}

// TestOutputHook: an Output hook whose matcher is a regular expression on
// the line gets each matching line the agent wrote, as data.
func TestOutputHook(t *testing.T) {
	tm := newTeam(t)
	got := filepath.Join(t.TempDir(), "lines")
	dir := project(t, fmt.Sprintf(`
[[hooks.Output]]
matcher = "^ERROR"
[[hooks.Output.hooks]]
type = "command"
command = 'printf "%%s\n" "$RELAY_LINE" >> "%s"'
`, got))
	ptytest.Start(t, ptytest.Options{Env: tm.env, Dir: dir, Cols: 100, Rows: 30},
		relayBin, "wrap", "--name", "Alice", "--", "sh", "-c", "echo 'ERROR: disk full on /var'; echo 'all fine here'; sleep 30")
	testutil.Eventually(t, func() error {
		b, err := os.ReadFile(got)
		if err != nil {
			return err
		}
		if string(b) != "ERROR: disk full on /var\n" {
			return fmt.Errorf("hook got %q", b)
		}
		return nil
	})
}
