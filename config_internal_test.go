package relay

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/config"
)

// TestHookStopReasonShown: a hook that answers {"continue": false,
// "stopReason": "…"} stops the chain and its reason reaches the agent.
func TestHookStopReasonShown(t *testing.T) {
	dir := t.TempDir()
	conf := `[[hooks.SessionStart]]
[[hooks.SessionStart.hooks]]
type = "command"
command = "echo '{\"continue\": false, \"stopReason\": \"the build is red, fix it first\"}'"
`
	if err := os.MkdirAll(filepath.Join(dir, ".relay"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".relay", "config.toml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.Sources{ProjectDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Home: t.TempDir(), Hub: NoHub, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UseConfig(c); err != nil {
		t.Fatal(err)
	}
	hs := r.eventHandlers(SessionStart)
	if len(hs) != 1 {
		t.Fatalf("%d SessionStart handlers", len(hs))
	}
	res, err := hs[0](context.Background(), EventInfo{Event: SessionStart, Agent: "Alice"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stop || !strings.Contains(res.Inject, "The SessionStart hook stopped: the build is red, fix it first") {
		t.Errorf("result %+v: want a stop that shows its reason", res)
	}
}

// TestPatternJSONCarriesRecent: a [[patterns.NAME]] command reads the
// agent's recent output and messages in its JSON, as hooks do.
func TestPatternJSONCarriesRecent(t *testing.T) {
	dir := t.TempDir()
	conf := `[[patterns.deploy]]
command = "cat > input.json"
cwd = "."
`
	if err := os.MkdirAll(filepath.Join(dir, ".relay"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".relay", "config.toml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.Sources{ProjectDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Home: t.TempDir(), Hub: NoHub, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UseConfig(c); err != nil {
		t.Fatal(err)
	}
	ps := r.userPatterns()
	if len(ps) != 1 {
		t.Fatalf("%d patterns", len(ps))
	}
	m := Match{Namespace: "deploy", Target: "staging", Agent: "Alice",
		RecentOutput: []string{"build ok"}, RecentMessages: []Message{{ID: "m1", From: "Bob", To: "Alice", Body: "ship it"}}}
	if _, err := ps[0].h(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "input.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		RecentOutput   []string `json:"recent_output"`
		RecentMessages []struct {
			From, Message string
		} `json:"recent_messages"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.RecentOutput) != 1 || got.RecentOutput[0] != "build ok" ||
		len(got.RecentMessages) != 1 || got.RecentMessages[0].From != "Bob" || got.RecentMessages[0].Message != "ship it" {
		t.Errorf("the handler read %s", b)
	}
}
