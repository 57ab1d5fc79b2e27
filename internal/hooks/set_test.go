package hooks_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/hooks"
)

func TestFire(t *testing.T) {
	t.Parallel()
	c, dir := loadConfig(t, `
[[hooks.MessageReceived]]
matcher = "mallory|eve"
[[hooks.MessageReceived.hooks]]
type = "command"
command = 'echo "no messages from $RELAY_FROM" >&2; exit 2'

[[hooks.MessageReceived]]
matcher = "bob"
[[hooks.MessageReceived.hooks]]
type = "command"
command = '''echo '{"message": "[from bob] '"$RELAY_BODY"'"}' '''

[[hooks.onMessageReceived]]
[[hooks.onMessageReceived.hooks]]
command = "cat > last.json; echo noted"

[[hooks.Output]]
matcher = "FAIL"
[[hooks.Output.hooks]]
command = "echo first"
[[hooks.Output.hooks]]
command = "echo '{\"inject\": \"second\", \"stop\": true}'"
[[hooks.Output.hooks]]
command = "echo never"

[[hooks.Idle]]
[[hooks.Idle.hooks]]
command = "exit 7"
[[hooks.Idle.hooks]]
command = "echo still ran"
`)
	set := hooks.NewSet(c.Hooks, hooks.SetOptions{Dir: dir, Vars: map[string]string{"RELAY_AGENT": "alice"}})
	ctx := context.Background()

	t.Run("refuse", func(t *testing.T) {
		res, err := set.Fire(ctx, "MessageReceived", "mallory", map[string]string{"from": "mallory", "body": "hi"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Blocked || res.Reason != "no messages from mallory" || res.Ran != 1 {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("whole-subject match", func(t *testing.T) {
		res, err := set.Fire(ctx, "MessageReceived", "bobby", map[string]string{"from": "bobby", "body": "hi"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Message != nil || res.Ran != 1 || strings.Join(res.Inject, ",") != "noted" {
			t.Errorf("bobby matched bob's hook: %+v", res)
		}
	})
	t.Run("rewrite", func(t *testing.T) {
		res, err := set.Fire(ctx, "MessageReceived", "bob", map[string]string{"from": "bob", "body": "hi"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Message == nil || *res.Message != "[from bob] hi" || res.Ran != 2 {
			t.Errorf("got %+v", res)
		}
		assertFile(t, filepath.Join(dir, "last.json"), `{"body":"hi","from":"bob","hook_event_name":"MessageReceived","subject":"bob"}`)
	})
	t.Run("output chain stops", func(t *testing.T) {
		res, err := set.Fire(ctx, "Output", "3 tests FAIL here", map[string]string{"line": "3 tests FAIL here"})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(res.Inject, ","); got != "first,second" || !res.Stopped || res.Ran != 2 {
			t.Errorf("got %+v", res)
		}
		if res, _ := set.Fire(ctx, "Output", "all ok", nil); res.Ran != 0 {
			t.Errorf("a line without FAIL ran %d hooks", res.Ran)
		}
	})
	t.Run("failure does not stop the chain", func(t *testing.T) {
		res, err := set.Fire(ctx, "onIdle", "alice", nil)
		var ee *hooks.ExitError
		if !errors.As(err, &ee) || ee.Code != 7 {
			t.Fatalf("err = %v, want exit status 7", err)
		}
		if !strings.Contains(err.Error(), "Idle hook 1.1") || !strings.Contains(err.Error(), "config.toml:") {
			t.Errorf("error does not say which hook: %v", err)
		}
		if strings.Join(res.Inject, ",") != "still ran" || res.Ran != 2 {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("unknown event", func(t *testing.T) {
		if _, err := set.Fire(ctx, "Whenever", "", nil); err == nil {
			t.Error("no error for an unknown event")
		}
		if set.Has("SessionEnd") || !set.Has("Output") || !set.Has("onOutput") {
			t.Error("Has is wrong")
		}
	})
}

func TestFireVars(t *testing.T) {
	t.Parallel()
	c, dir := loadConfig(t, `
[[hooks.SessionStart]]
[[hooks.SessionStart.hooks]]
command = "env | grep ^RELAY_ | sort > env.txt"
`)
	set := hooks.NewSet(c.Hooks, hooks.SetOptions{Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH")},
		Vars: map[string]string{"RELAY_AGENT": "alice", "RELAY_SESSION_ID": "s-9"}})
	payload := struct {
		Source  string `json:"source"`
		Count   int    `json:"count"`
		Resumed bool   `json:"resumed"`
		Nested  []int  `json:"nested"`
	}{"startup", 3, true, []int{1}}
	if _, err := set.Fire(context.Background(), string(config.SessionStart), "claude", payload); err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(dir, "env.txt"), strings.Join([]string{
		"RELAY_AGENT=alice", "RELAY_COUNT=3", "RELAY_EVENT=SessionStart", "RELAY_RESUMED=true",
		"RELAY_SESSION_ID=s-9", "RELAY_SOURCE=startup", "RELAY_SUBJECT=claude", ""}, "\n"))
}

// TestFirePayloadFields: the typed payloads put their fields, the embedded
// Session's included, at the top level of stdin and in RELAY_* variables.
func TestFirePayloadFields(t *testing.T) {
	t.Parallel()
	c, dir := loadConfig(t, `
[[hooks.MessageReceived]]
[[hooks.MessageReceived.hooks]]
command = 'cat > in.json; printf "%s|%s|%s|%s" "$RELAY_FROM" "$RELAY_MESSAGE" "$RELAY_AGENT" "$RELAY_SUBJECT" > env.txt'
`)
	set := hooks.NewSet(c.Hooks, hooks.SetOptions{Dir: dir})
	p := hooks.MessagePayload{Session: hooks.Session{Agent: "alice", SessionID: "s1", Workspace: "w", Cwd: "/x"},
		ID: "m1", From: "bob", To: "alice", Message: "run `make test`"}
	if _, err := set.Fire(context.Background(), "MessageReceived", p.From, p); err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(dir, "env.txt"), "bob|run `make test`|alice|bob")
	assertFile(t, filepath.Join(dir, "in.json"),
		`{"agent":"alice","cwd":"/x","from":"bob","hook_event_name":"MessageReceived","id":"m1","message":"run `+"`make test`"+`","session_id":"s1","subject":"bob","to":"alice","workspace":"w"}`)
}

// TestFireNeutralize: a hook's text keeps its commands unless the hook
// asks for it to be typed as a peer's: `neutralize = true` in its
// configuration, or "neutralize": true in its JSON answer.
func TestFireNeutralize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, hook string
		want       bool
	}{
		{"plain text", `command = "echo 'write @memory:save FACT'"`, false},
		{"configured", "command = \"echo 'Carol: @relay:Bob x'\"\nneutralize = true", true},
		{"in the answer", `command = "echo '{\"inject\": \"Carol: @relay:Bob x\", \"neutralize\": true}'"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, dir := loadConfig(t, "[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\n"+tc.hook+"\n")
			set := hooks.NewSet(c.Hooks, hooks.SetOptions{Dir: dir})
			res, err := set.Fire(context.Background(), string(config.SessionStart), "x", struct{}{})
			if err != nil || len(res.Inject) != 1 || res.Neutralize != tc.want {
				t.Errorf("got %+v, %v; want one text, Neutralize %v", res, err, tc.want)
			}
		})
	}
}
