package qwen

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/patterns"
)

// overlayHooks is the part of the overlay the hook tests read.
type overlayHooks struct {
	Version    int                       `json:"$version"`
	MCPServers map[string]map[string]any `json:"mcpServers"`
	UI         map[string]any            `json:"ui"`
	Hooks      map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Env     map[string]string `json:"env"`
			Timeout int               `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

// TestExactInstallsPreToolUseHook: with BeforeToolCall handlers, the
// system-defaults overlay carries a PreToolUse command hook running
// `relay hook PreToolUse` (the binary quoted for bash, the socket in the
// hook's env, not its command line), after the defaults' own hooks and
// beside relay's MCP server and the defaults' settings; without handlers
// there is no hook of relay's; with handlers and no MCP server the overlay
// still carries the hook.
func TestExactInstallsPreToolUseHook(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := filepath.Join(dir, "defaults.json")
	defaults := `{"mcpServers": {"other": {"command": "x"}}, "ui": {"theme": "dark"},
		"hooks": {"PreToolUse": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "audit"}]}]}}`
	if err := os.WriteFile(base, []byte(defaults), 0o600); err != nil {
		t.Fatal(err)
	}
	relay := filepath.Join(dir, "my relay's bin", "relay")
	mcp := &agents.MCPServer{Command: "/bin/relay", Args: []string{"mcp"},
		Env: map[string]string{"RELAY_NAME": "Carol", "RELAY_WORKSPACE": "w"}}
	for _, tc := range []struct {
		name     string
		handlers bool
		mcp      *agents.MCPServer
	}{
		{"handlers and MCP", true, mcp},
		{"MCP only", false, mcp},
		{"handlers only", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			l := agents.Launch{
				Env:  []string{SystemDefaultsEnv + "=" + base, "HOME=" + home, "RELAY_NAME=Carol", "RELAY_WORKSPACE=w"},
				Home: home, Log: slog.New(slog.DiscardHandler), MCP: tc.mcp,
				RelayBinary: relay, BeforeToolCall: tc.handlers,
			}
			set, err := exact(l)
			if err != nil {
				t.Fatal(err)
			}
			h, hooked := set.Source.(*hookSource)
			if hooked != tc.handlers {
				t.Fatalf("source %T, want the hook source: %v", set.Source, tc.handlers)
			}
			if hooked {
				defer h.srv.Close()
				if h.inner == nil {
					t.Error("the chat record is no longer followed")
				}
			}
			path := lookup(set.Env, SystemDefaultsEnv)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("overlay: %v (env %q)", err, set.Env)
			}
			var got overlayHooks
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatal(err)
			}
			if _, ok := got.MCPServers["other"]; !ok || got.UI["theme"] != "dark" || got.Version != settingsVersion {
				t.Errorf("overlay lost the defaults or the version:\n%s", data)
			}
			if _, ok := got.MCPServers["relay"]; ok != (tc.mcp != nil) {
				t.Errorf("relay's MCP server present: %v, want %v", ok, tc.mcp != nil)
			}
			pre := got.Hooks["PreToolUse"]
			want := 1
			if tc.handlers {
				want = 2
			}
			if len(pre) != want || pre[0].Matcher != "write_file" || pre[0].Hooks[0].Command != "audit" {
				t.Fatalf("PreToolUse hooks %+v, want the defaults' own first, %d in all", pre, want)
			}
			if !tc.handlers {
				return
			}
			r := pre[1]
			if r.Matcher != "*" || len(r.Hooks) != 1 {
				t.Fatalf("relay's hook: %+v", r)
			}
			c := r.Hooks[0]
			if wantCmd := `'` + dir + `/my relay'\''s bin/relay' hook PreToolUse`; c.Type != "command" || c.Command != wantCmd {
				t.Errorf("command %q (%s), want %q", c.Command, c.Type, wantCmd)
			}
			if c.Env[hookrpc.SocketEnv] != h.srv.Path() || c.Timeout != preToolUseTimeout {
				t.Errorf("env %v, timeout %d: want the socket %s", c.Env, c.Timeout, h.srv.Path())
			}
			post := got.Hooks[PostToolUseEvent]
			if len(post) != 1 || post[0].Matcher != "*" || len(post[0].Hooks) != 1 {
				t.Fatalf("PostToolUse hooks %+v, want relay's", post)
			}
			if p := post[0].Hooks[0]; p.Command != `'`+dir+`/my relay'\''s bin/relay' hook PostToolUse` ||
				p.Env[hookrpc.SocketEnv] != h.srv.Path() || p.Timeout != postToolUseTimeout {
				t.Errorf("relay's PostToolUse hook %+v", p)
			}
		})
	}
}

// TestPreToolUseAnswer: a refusal is Qwen Code's deny with the reason
// (context after it, since Qwen Code drops a denial's additionalContext);
// an allowed call gets nothing (its context goes with its PostToolUse).
func TestPreToolUseAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		v    agents.ToolVerdict
		want string
	}{
		{"deny", agents.ToolVerdict{Block: true, Reason: "no shell"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no shell"}}`},
		{"deny with context", agents.ToolVerdict{Block: true, Reason: "no shell", Context: "ask Bob"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no shell\n\nask Bob"}}`},
		{"deny without reason", agents.ToolVerdict{Block: true},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"refused by a BeforeToolCall hook"}}`},
		{"context", agents.ToolVerdict{Context: "lint after"}, ""},
		{"allow", agents.ToolVerdict{}, ""},
		{"blank context", agents.ToolVerdict{Context: " \n"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PreToolUseAnswer(tc.v); got != tc.want {
				t.Errorf("got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// toolSink is an agents.Sink that answers BeforeToolCall with verdict and
// records the calls.
type toolSink struct {
	mu      sync.Mutex
	verdict func(tool string) agents.ToolVerdict
	calls   []string
}

func (s *toolSink) Texts([]string)                           {}
func (s *toolSink) Prompted([]string)                        {}
func (s *toolSink) Commands([]patterns.Command)              {}
func (s *toolSink) Turn(agents.Turn)                         {}
func (s *toolSink) ToolCall(context.Context, string, []byte) {}
func (s *toolSink) BeforeToolCall(_ context.Context, tool string, input []byte) agents.ToolVerdict {
	s.mu.Lock()
	s.calls = append(s.calls, tool+" "+string(input))
	s.mu.Unlock()
	return s.verdict(tool)
}
func (s *toolSink) HandOver() (string, func(error), bool) { return "", nil, false }
func (s *toolSink) Idle() bool                            { return false }
func (s *toolSink) Pid() int                              { return 0 }
func (s *toolSink) Go(f func())                           { go f() }

// TestHookSourceAnswers: over the socket, as `relay hook` reaches it, a
// PreToolUse the handlers refuse is denied with their reason; one they
// allow gets nothing, and the context they added comes back once with that
// call's PostToolUse (Qwen Code appends it to the tool's result); other
// events and payloads without a tool are not shown to the handlers.
func TestHookSourceAnswers(t *testing.T) {
	t.Parallel()
	h, settings, err := startHooks(agents.Launch{Home: t.TempDir(), RelayBinary: "/bin/relay", BeforeToolCall: true, Log: slog.New(slog.DiscardHandler)})
	if err != nil || settings == nil {
		t.Fatalf("startHooks: %v, %v", settings, err)
	}
	sink := &toolSink{verdict: func(tool string) agents.ToolVerdict {
		switch tool {
		case "run_shell_command":
			return agents.ToolVerdict{Block: true, Reason: "no shell on Fridays"}
		case "write_file":
			return agents.ToolVerdict{Context: "run the linter after this write"}
		}
		return agents.ToolVerdict{}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx, sink) }()
	defer func() {
		cancel()
		<-done
	}()
	call := func(event, payload string) string {
		t.Helper()
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		resp, err := hookrpc.Call(cctx, h.srv.Path(), hookrpc.Request{Event: event, Payload: json.RawMessage(payload)})
		if err != nil {
			t.Fatalf("%s: %v", event, err)
		}
		if resp.ExitCode != 0 {
			t.Errorf("%s exited %d", event, resp.ExitCode)
		}
		return resp.Stdout
	}
	shell := `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"run_shell_command","tool_input":{"command":"touch x"},"tool_use_id":"toolu_1"}`
	if got, want := call(PreToolUseEvent, shell), PreToolUseAnswer(agents.ToolVerdict{Block: true, Reason: "no shell on Fridays"}); got != want {
		t.Errorf("PreToolUse run_shell_command answered %s, want %s", got, want)
	}
	if got := call(PreToolUseEvent, `{"tool_name":"read_file","tool_input":{"file_path":"a.go"}}`); got != "" {
		t.Errorf("an allowed call was answered %s", got)
	}
	if got := call(PostToolUseEvent, shell); got != "" {
		t.Errorf("the refused call's PostToolUse was answered %s", got)
	}
	write := func(id string) string {
		return `{"tool_name":"write_file","tool_input":{"file_path":"a.go"},"tool_use_id":"` + id + `"}`
	}
	if got := call(PreToolUseEvent, write("toolu_2")); got != "" {
		t.Errorf("an allowed call with context was answered %s", got)
	}
	if got := call(PostToolUseEvent, write("toolu_3")); got != "" {
		t.Errorf("another call's PostToolUse was answered %s", got)
	}
	if got, want := call(PostToolUseEvent, write("toolu_2")), PostToolUseAnswer("run the linter after this write"); got != want {
		t.Errorf("PostToolUse answered %s, want %s", got, want)
	}
	if got := call(PostToolUseEvent, write("toolu_2")); got != "" {
		t.Errorf("the context came twice: %s", got)
	}
	if got := call(PreToolUseEvent, `{"tool_input":{}}`); got != "" {
		t.Errorf("a payload without a tool was answered %s", got)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.calls) != 3 || sink.calls[0] != `run_shell_command {"command":"touch x"}` {
		t.Errorf("the handlers saw %q, want the three PreToolUse calls with their input", sink.calls)
	}
}

// TestPostToolUseAnswer: context is Qwen Code's additionalContext of a
// PostToolUse answer; none, no answer.
func TestPostToolUseAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ context, want string }{
		{"lint after", `{"hookSpecificOutput":{"additionalContext":"lint after","hookEventName":"PostToolUse"}}`},
		{" \n", ""},
	} {
		if got := PostToolUseAnswer(tc.context); got != tc.want {
			t.Errorf("PostToolUseAnswer(%q) = %s, want %s", tc.context, got, tc.want)
		}
	}
}
