package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/patterns"
)

// hooksFile is the part of the overlay's hooks a test reads.
type hooksFile struct {
	MCPServers map[string]any `json:"mcpServers"`
	Hooks      map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string `json:"type"`
			Name    string `json:"name"`
			Command string `json:"command"`
			Timeout int    `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

func readOverlay(t *testing.T, env []string) (hooksFile, string) {
	t.Helper()
	path := lookup(env, SystemDefaultsEnv)
	if path == "" {
		t.Fatalf("no %s in %q", SystemDefaultsEnv, env)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f hooksFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("overlay %s: %v\n%s", path, err, b)
	}
	return f, string(b)
}

// TestExactInstallsToolHooks: with BeforeToolCall handlers, relay's
// system-defaults overlay holds Gemini CLI's BeforeTool and AfterTool
// hooks running `relay hook EVENT` with the session's socket, after the
// admin's own hooks; without handlers there are none (and no overlay when
// there is no MCP server either); a resumed session, whose transcript relay
// cannot follow, still gets them.
func TestExactInstallsToolHooks(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tmp := t.TempDir()
	defaults := filepath.Join(tmp, "system-defaults.json")
	if err := os.WriteFile(defaults, []byte(`{"hooks":{"BeforeTool":[{"matcher":"write_file","hooks":[{"type":"command","command":"audit"}]}]},"ui":{"theme":"x"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"RELAY_NAME=Carol", "RELAY_WORKSPACE=ws", SystemDefaultsEnv + "=" + defaults, "HOME=" + tmp}
	relay := filepath.Join(tmp, "my bin", "relay")
	launch := func(before bool, args ...string) agents.Launch {
		return agents.Launch{Command: "gemini", Args: args, Env: env, Dir: tmp, Home: filepath.Join(tmp, "relay"),
			RelayBinary: relay, BeforeToolCall: before, Started: time.Now(), Log: quiet}
	}
	for _, c := range []struct {
		name   string
		before bool
		args   []string
		follow bool // the transcript is followed (--session-id added)
	}{
		{"handlers", true, nil, true},
		{"handlers, resumed", true, []string{"--resume", "latest"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			setup, err := exactWith(launch(c.before, c.args...), readAll)
			if err != nil {
				t.Fatal(err)
			}
			h, ok := setup.Source.(*hookSource)
			if !ok {
				t.Fatalf("the source is %T, want the hooks", setup.Source)
			}
			defer h.srv.Close()
			if (h.inner != nil) != c.follow || (len(setup.Args) > 0) != c.follow {
				t.Errorf("transcript followed: %v (args %q), want %v", h.inner != nil, setup.Args, c.follow)
			}
			f, raw := readOverlay(t, setup.Env)
			for event, timeout := range map[string]int{BeforeToolEvent: beforeToolTimeoutMS, AfterToolEvent: afterToolTimeoutMS} {
				defs := f.Hooks[event]
				if event == BeforeToolEvent {
					if len(defs) != 2 || defs[0].Matcher != "write_file" || defs[0].Hooks[0].Command != "audit" {
						t.Fatalf("the admin's BeforeTool hook is not kept first:\n%s", raw)
					}
					defs = defs[1:]
				}
				if len(defs) != 1 || len(defs[0].Hooks) != 1 || defs[0].Matcher != "" {
					t.Fatalf("%s: want one hook for every tool:\n%s", event, raw)
				}
				hk := defs[0].Hooks[0]
				want := hookrpc.SocketEnv + "=" + shellQuote(h.srv.Path()) + " '" + relay + "' hook " + event
				if hk.Type != "command" || hk.Name != "relay" || hk.Command != want || hk.Timeout != timeout {
					t.Errorf("%s hook %+v, want command %q, timeout %d ms", event, hk, want, timeout)
				}
				if hk.Timeout <= int(hookrpc.Limit(event)/time.Millisecond) {
					t.Errorf("%s: Gemini CLI's limit %d ms is not above relay hook's %v", event, hk.Timeout, hookrpc.Limit(event))
				}
			}
			if !strings.Contains(raw, `"theme": "x"`) {
				t.Errorf("the admin's other defaults were lost:\n%s", raw)
			}
		})
	}
	t.Run("no handlers", func(t *testing.T) {
		setup, err := exactWith(launch(false), readAll)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := setup.Source.(*hookSource); ok || lookup(setup.Env, SystemDefaultsEnv) != "" {
			t.Errorf("hooks installed without BeforeToolCall handlers: source %T, env %q", setup.Source, setup.Env)
		}
		l := launch(false)
		l.MCP = &agents.MCPServer{Command: relay, Args: []string{"mcp"}, Env: map[string]string{"RELAY_NAME": "Carol", "RELAY_WORKSPACE": "ws"}}
		setup, err = exactWith(l, readAll)
		if err != nil {
			t.Fatal(err)
		}
		f, raw := readOverlay(t, setup.Env)
		if len(f.Hooks[AfterToolEvent]) != 0 || len(f.Hooks[BeforeToolEvent]) != 1 || f.MCPServers["relay"] == nil {
			t.Errorf("want relay's MCP server and the admin's hook only:\n%s", raw)
		}
	})
	t.Run("overlay skipped by Gemini CLI", func(t *testing.T) {
		var logged strings.Builder
		l := launch(true)
		l.Log = slog.New(slog.NewTextHandler(&logged, nil))
		setup, err := exactWith(l, SystemFileRead) // below /tmp: skipped
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := setup.Source.(*hookSource); ok {
			t.Errorf("the hooks are kept though Gemini CLI will not read them")
		}
		if !strings.Contains(logged.String(), "BeforeToolCall handlers will not see its tool calls") || !strings.Contains(logged.String(), "writable by its group or others") {
			t.Errorf("the log does not say why the hooks are missing:\n%s", logged.String())
		}
	})
	t.Run("resumed, no handlers", func(t *testing.T) {
		if _, err := exactWith(launch(false, "-r", "latest"), readAll); err == nil {
			t.Error("a resumed session without handlers should read the screen only")
		}
	})
}

// readAll stands for Gemini CLI reading every overlay (the tests' folders
// are below /tmp, which it would skip).
func readAll(string) error { return nil }

func TestOverlayBadHooks(t *testing.T) {
	hooks, err := HookSettings("/bin/relay", "/run/x.sock")
	if err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{`{"hooks":[]}`, `{"hooks":{"BeforeTool":{}}}`} {
		if _, err := Overlay([]byte(base), nil, nil, hooks); err == nil {
			t.Errorf("Overlay(%s) took hooks it cannot extend", base)
		}
	}
	if _, err := HookSettings("/bin/re\nlay", "/run/x.sock"); err == nil {
		t.Error("a binary path with a line break was taken")
	}
}

func TestToolHookAnswers(t *testing.T) {
	for _, c := range []struct {
		name string
		v    agents.ToolVerdict
		want string
	}{
		{"nothing", agents.ToolVerdict{}, ""},
		{"context only waits for AfterTool", agents.ToolVerdict{Context: "mind the tests"}, ""},
		{"block", agents.ToolVerdict{Block: true, Reason: "no deletions"}, `{"decision":"deny","reason":"no deletions"}`},
		{"block without a reason", agents.ToolVerdict{Block: true}, `{"decision":"deny","reason":"refused by a BeforeToolCall hook"}`},
		{"block with context", agents.ToolVerdict{Block: true, Reason: "no", Context: "ask Bob"}, `{"decision":"deny","reason":"no\n\nask Bob"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := BeforeToolAnswer(c.v); got != c.want {
				t.Errorf("BeforeToolAnswer = %s, want %s", got, c.want)
			}
		})
	}
	if got, want := AfterToolAnswer("a <b>"), `{"hookSpecificOutput":{"additionalContext":"a \u003cb\u003e","hookEventName":"AfterTool"}}`; got != want {
		t.Errorf("AfterToolAnswer = %s, want %s", got, want)
	}
	if got := AfterToolAnswer(" "); got != "" {
		t.Errorf("AfterToolAnswer of nothing = %q", got)
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
// BeforeTool the handlers refuse is denied with their reason; context for
// a call that goes on comes back on that call's AfterTool (whatever the
// order of its input's keys), once; a tool without context gets nothing.
func TestHookSourceAnswers(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, settings, err := startHooks(agents.Launch{Home: t.TempDir(), RelayBinary: "/bin/relay", BeforeToolCall: true, Log: quiet})
	if err != nil || settings == nil {
		t.Fatalf("startHooks: %v, %v", settings, err)
	}
	sink := &toolSink{verdict: func(tool string) agents.ToolVerdict {
		switch tool {
		case "run_shell_command":
			return agents.ToolVerdict{Block: true, Reason: "no shell on Fridays"}
		case "write_file":
			return agents.ToolVerdict{Context: "run the linter after writing"}
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
	const shell = `{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"rm -rf build","description":"clean"}}`
	if got, want := call(BeforeToolEvent, shell), `{"decision":"deny","reason":"no shell on Fridays"}`; got != want {
		t.Errorf("BeforeTool run_shell_command answered %s, want %s", got, want)
	}
	if got := call(BeforeToolEvent, `{"hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":"a.go","content":"x"}}`); got != "" {
		t.Errorf("BeforeTool write_file answered %s, want nothing (context waits for AfterTool)", got)
	}
	if got := call(AfterToolEvent, `{"hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{"file_path":"a.go"}}`); got != "" {
		t.Errorf("AfterTool of a call without context answered %s", got)
	}
	after := `{"hook_event_name":"AfterTool","tool_name":"write_file","tool_input":{"content":"x","file_path":"a.go"},"tool_response":{"llmContent":"ok"}}`
	if got := call(AfterToolEvent, after); !strings.Contains(got, `"additionalContext":"run the linter after writing"`) || !strings.Contains(got, `"hookEventName":"AfterTool"`) {
		t.Errorf("AfterTool write_file answered %s, want the context", got)
	}
	if got := call(AfterToolEvent, after); got != "" {
		t.Errorf("the context was given twice: %s", got)
	}
	if got := call(BeforeToolEvent, `{"tool_input":{}}`); got != "" {
		t.Errorf("a payload without a tool was answered: %s", got)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.calls) != 2 || sink.calls[0] != `run_shell_command {"command":"rm -rf build","description":"clean"}` {
		t.Errorf("the handlers saw %q, want the two BeforeTool calls with their input", sink.calls)
	}
}

func TestPendingContextIsBounded(t *testing.T) {
	h := &hookSource{}
	for i := range maxPending + 10 {
		h.keep(string(rune('a'+i)), "x")
	}
	if len(h.pending) != maxPending || h.take("a") != "" || h.take(string(rune('a'+maxPending+9))) != "x" {
		t.Errorf("pending holds %d, want the last %d", len(h.pending), maxPending)
	}
}

// TestSystemFileRead: Gemini CLI reads a system settings file only below
// folders that root owns and others cannot write.
func TestSystemFileRead(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "defaults.json")
	if err := os.WriteFile(file, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := os.Geteuid() == 0
	for _, c := range []struct {
		name string
		path string
		ok   bool
		why  string
	}{
		{"below /tmp", file, false, "/tmp is writable by its group or others"},
		{"a missing file in root's folder", "/etc/relay-test-missing.json", true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := SystemFileRead(c.path)
			if (err == nil) != c.ok {
				t.Fatalf("SystemFileRead(%s) = %v, want read %v", c.path, err, c.ok)
			}
			if err != nil && (!errors.Is(err, ErrSkipped) || (root && !strings.Contains(err.Error(), c.why))) {
				t.Errorf("SystemFileRead(%s) = %v, want %q", c.path, err, c.why)
			}
		})
	}
	if root {
		private := filepath.Join(tmp, "x")
		t.Run("a group-writable file", func(t *testing.T) {
			if err := os.WriteFile(private, nil, 0o620); err != nil {
				t.Fatal(err)
			}
			os.Chmod(private, 0o620)
			if err := secure(private, false); err == nil || !strings.Contains(err.Error(), "mode 620") {
				t.Errorf("secure = %v", err)
			}
		})
	}
}

// TestMCPDiagnosis: relay doctor says relay's MCP tools reach Gemini CLI
// only when Gemini CLI will read the overlay; otherwise it says they are
// missing, and why.
func TestMCPDiagnosis(t *testing.T) {
	skipped := func(string) error { return fmt.Errorf("%w: /tmp is writable by its group or others", ErrSkipped) }
	read := func(string) error { return nil }
	for _, c := range []struct {
		name, home string
		read       func(string) error
		prefix     string
		has        string
	}{
		{"read", "/var/lib/relay", read, "registered for each session", "server trusted"},
		{"skipped", "/tmp/relay", skipped, "missing:", "/tmp is writable by its group or others"},
		{"unknown state folder", "", skipped, "registered for each session", "only when relay runs as root"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mcpDiagnosis(c.home, c.read)
			if !strings.HasPrefix(got, c.prefix) || !strings.Contains(got, c.has) {
				t.Errorf("mcpDiagnosis(%q) = %q, want %q … %q", c.home, got, c.prefix, c.has)
			}
		})
	}
	// The real check, for a state folder below /tmp (the tests'), or as
	// a user other than root: always skipped.
	if err := OverlayRead(t.TempDir()); !errors.Is(err, ErrSkipped) {
		t.Errorf("OverlayRead below /tmp = %v, want skipped", err)
	}
}
