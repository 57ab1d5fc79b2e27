package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/hooks"
)

// loadConfig writes toml as a project's .relay/config.toml in a fresh
// folder and loads it.
func loadConfig(t testing.TB, toml string) (*config.Config, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".relay"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".relay", "config.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.Sources{ProjectDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return c, dir
}

func namespace(t testing.TB, c *config.Config, name string) *hooks.Namespace {
	t.Helper()
	p, ok := c.Pattern(name)
	if !ok {
		t.Fatalf("no pattern %q", name)
	}
	return hooks.NewNamespace(p, nil)
}

// TestNamespaceInput checks the JSON on stdin and the RELAY_* variables a
// handler gets, and that its answer comes back. The JSON carries the
// agent's recent output and messages, as the lifecycle hooks' does.
func TestNamespaceInput(t *testing.T) {
	t.Parallel()
	c, dir := loadConfig(t, `
[patterns.deploy]
command = 'cat > input.json; env | grep ^RELAY_ | sort > env.txt; echo "Deployed to $RELAY_TARGET"'
cwd = "."
`)
	m := hooks.Match{Namespace: "deploy", Target: "staging", Body: "Release v1.2.3", Agent: "alice",
		SessionID: "s-1", Workspace: "team", Cwd: "/work/app",
		RecentOutput:   []string{"$ make", "build ok"},
		RecentMessages: []hooks.RecentMessage{{ID: "m1", From: "bob", To: "alice", Body: "ship it", At: time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)}}}
	out, err := namespace(t, c, "deploy").Handle(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if out.Inject != "Deployed to staging" {
		t.Errorf("Inject = %q", out.Inject)
	}
	assertFile(t, filepath.Join(dir, "input.json"),
		`{"namespace":"deploy","target":"staging","body":"Release v1.2.3","agent":"alice","session_id":"s-1","workspace":"team","cwd":"/work/app",`+
			`"recent_output":["$ make","build ok"],"recent_messages":[{"id":"m1","from":"bob","to":"alice","message":"ship it","at":"2026-12-04T21:00:00Z"}]}`)
	// Nothing recent yet: empty lists, never null, so that jq '.recent_output[]' works.
	m.RecentOutput, m.RecentMessages = nil, nil
	if _, err := namespace(t, c, "deploy").Handle(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(dir, "input.json"),
		`{"namespace":"deploy","target":"staging","body":"Release v1.2.3","agent":"alice","session_id":"s-1","workspace":"team","cwd":"/work/app",`+
			`"recent_output":[],"recent_messages":[]}`)
	env, err := os.ReadFile(filepath.Join(dir, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RELAY_AGENT=alice", "RELAY_MESSAGE=Release v1.2.3", "RELAY_NAMESPACE=deploy",
		"RELAY_SESSION_ID=s-1", "RELAY_TARGET=staging", "RELAY_WORKSPACE=team"} {
		if !strings.Contains(string(env), want+"\n") {
			t.Errorf("env lacks %s:\n%s", want, env)
		}
	}
}

// TestNamespaceBodyIsData: shell syntax in the target and body reaches the
// handler as text and never runs, whether the command is a string (even
// one that uses the variables carelessly, unquoted) or an argv list.
func TestNamespaceBodyIsData(t *testing.T) {
	t.Parallel()
	body := "$(touch PWNED1) `touch PWNED2`; touch PWNED3 && rm -rf ./victim | touch PWNED4 'single' \"double\" \\ $HOME ${IFS}"
	target := "$(touch PWNED5);touch${IFS}PWNED6"
	commands := map[string]string{
		"quoted":   `command = 'printf "%s\n%s" "$RELAY_TARGET" "$RELAY_MESSAGE" > got.txt'`,
		"unquoted": `command = 'echo $RELAY_MESSAGE $RELAY_TARGET > careless.txt; printf "%s\n%s" "$RELAY_TARGET" "$RELAY_MESSAGE" > got.txt'`,
		"argv":     `command = ["sh", "-c", "cat > got.json"]`,
	}
	for name, line := range commands {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, dir := loadConfig(t, "[patterns.deploy]\ncwd = \".\"\n"+line+"\n")
			if err := os.Mkdir(filepath.Join(dir, "victim"), 0o755); err != nil {
				t.Fatal(err)
			}
			m := hooks.Match{Namespace: "deploy", Target: target, Body: body, Agent: "alice"}
			if _, err := namespace(t, c, "deploy").Handle(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			if name == "argv" {
				var in struct{ Target, Body string }
				b, _ := os.ReadFile(filepath.Join(dir, "got.json"))
				if err := json.Unmarshal(b, &in); err != nil {
					t.Fatal(err)
				}
				if in.Target != target || in.Body != body {
					t.Errorf("handler got target %q body %q", in.Target, in.Body)
				}
			} else {
				assertFile(t, filepath.Join(dir, "got.txt"), target+"\n"+body)
			}
			matches, _ := filepath.Glob(filepath.Join(dir, "PWNED*"))
			if len(matches) > 0 {
				t.Errorf("a command in the message ran: %v", matches)
			}
			if _, err := os.Stat(filepath.Join(dir, "victim")); err != nil {
				t.Errorf("rm -rf in the message ran: %v", err)
			}
		})
	}
}

func TestNamespaceAllow(t *testing.T) {
	t.Parallel()
	c, dir := loadConfig(t, `
[patterns.deploy]
command = "touch ran"
cwd = "."
allow = ["alice", "carol"]
`)
	ns := namespace(t, c, "deploy")
	out, err := ns.Handle(context.Background(), hooks.Match{Namespace: "deploy", Target: "prod", Agent: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	want := "only alice, carol may use it, not bob"
	if !out.Block || out.Reason != want {
		t.Errorf("got %+v, want a refusal %q", out, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the handler ran for an agent not allowed")
	}
	if out, err := ns.Handle(context.Background(), hooks.Match{Namespace: "deploy", Agent: "carol"}); err != nil || out.Block {
		t.Fatalf("carol: %+v, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err != nil {
		t.Error("the handler did not run for an allowed agent")
	}
}

func TestNamespaceRefusalReachesCaller(t *testing.T) {
	t.Parallel()
	c, _ := loadConfig(t, "[patterns.deploy]\ncommand = 'echo \"prod is frozen; try staging\" >&2; exit 2'\n")
	out, err := namespace(t, c, "deploy").Handle(context.Background(), hooks.Match{Namespace: "deploy", Target: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Block || out.Reason != "prod is frozen; try staging" {
		t.Errorf("got %+v", out)
	}
}

func TestNamespaceInjectFalse(t *testing.T) {
	t.Parallel()
	c, _ := loadConfig(t, "[patterns.notify]\ncommand = 'echo noisy; echo more'\ninject = false\n")
	out, err := namespace(t, c, "notify").Handle(context.Background(), hooks.Match{Namespace: "notify"})
	if err != nil || out.Inject != "" {
		t.Fatalf("got %+v, %v; want no text", out, err)
	}
}

func TestNamespaceTimeout(t *testing.T) {
	t.Parallel()
	c, _ := loadConfig(t, "[patterns.slow]\ncommand = 'exec sleep 1000'\ntimeout = \"200ms\"\n")
	_, err := namespace(t, c, "slow").Handle(context.Background(), hooks.Match{Namespace: "slow"})
	if err == nil || err.Error() != "timed out after 200ms" {
		t.Fatalf("err = %v", err)
	}
}
