package opencode

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/patterns"
)

// toolSink is an agents.Sink that answers BeforeToolCall with verdict and
// records the calls before and after.
type toolSink struct {
	mu      sync.Mutex
	verdict func(tool string) agents.ToolVerdict
	before  []string
	after   []string
}

func (s *toolSink) Texts([]string)              {}
func (s *toolSink) Prompted([]string)           {}
func (s *toolSink) Commands([]patterns.Command) {}
func (s *toolSink) Turn(agents.Turn)            {}
func (s *toolSink) ToolCall(_ context.Context, tool string, input []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.after = append(s.after, tool+" "+string(input))
}
func (s *toolSink) BeforeToolCall(_ context.Context, tool string, input []byte) agents.ToolVerdict {
	s.mu.Lock()
	s.before = append(s.before, tool+" "+string(input))
	s.mu.Unlock()
	return s.verdict(tool)
}
func (s *toolSink) HandOver() (string, func(error), bool) { return "", nil, false }
func (s *toolSink) Idle() bool                            { return false }
func (s *toolSink) Pid() int                              { return 0 }
func (s *toolSink) Go(f func())                           { go f() }

// TestPluginAnswers: with BeforeToolCall handlers, the session names
// relay's plugin in OPENCODE_CONFIG_CONTENT (after the user's plugins) and
// points it at a socket; over that socket, as the plugin calls it, a tool
// call the handlers refuse gets its reason (and context) back, one they
// let through gets nothing, and a finished call is reported. Without
// handlers there is no plugin.
func TestPluginAnswers(t *testing.T) {
	t.Parallel()
	l := agents.Launch{
		Env:  []string{ConfigContentEnv + `={"plugin": ["my-plugin@1"]}`, "HOME=" + t.TempDir()},
		Home: t.TempDir(), Dir: t.TempDir(), BeforeToolCall: true, Log: slog.New(slog.DiscardHandler),
	}
	set, err := exact(l)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct{ Plugin []string }
	if err := json.Unmarshal([]byte(lookup(set.Env, ConfigContentEnv)), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Plugin) != 2 || cfg.Plugin[0] != "my-plugin@1" || !strings.HasSuffix(cfg.Plugin[1], "/run/"+PluginFile) || !strings.HasPrefix(cfg.Plugin[1], "file://"+l.Home) {
		t.Fatalf("plugins %q: want the user's, then relay's file", cfg.Plugin)
	}
	socket := lookup(set.Env, hookrpc.SocketEnv)
	if socket == "" {
		t.Fatalf("no socket in %q", set.Env)
	}
	sink := &toolSink{verdict: func(tool string) agents.ToolVerdict {
		if tool == "bash" {
			return agents.ToolVerdict{Block: true, Reason: "no shell on Fridays", Context: "ask Bob"}
		}
		return agents.ToolVerdict{}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- set.Source.Run(ctx, sink) }()
	defer func() {
		cancel()
		<-done
	}()
	call := func(event, payload string) string {
		t.Helper()
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		resp, err := hookrpc.Call(cctx, socket, hookrpc.Request{Event: event, Payload: json.RawMessage(payload)})
		if err != nil {
			t.Fatalf("%s: %v", event, err)
		}
		return resp.Stdout
	}
	if got, want := call("opencode:tool.execute.before", `{"tool":"bash","input":{"command":"rm -rf build"}}`), `{"block":true,"reason":"no shell on Fridays\n\nask Bob"}`; got != want {
		t.Errorf("refused call: %s, want %s", got, want)
	}
	if got := call("opencode:tool.execute.before", `{"tool":"read","input":{"filePath":"a"}}`); got != "" {
		t.Errorf("allowed call: %s, want nothing", got)
	}
	call("opencode:tool.execute.after", `{"tool":"read","input":{"filePath":"a"}}`)
	sink.mu.Lock()
	before, after := strings.Join(sink.before, "|"), strings.Join(sink.after, "|")
	sink.mu.Unlock()
	if before != `bash {"command":"rm -rf build"}|read {"filePath":"a"}` || after != `read {"filePath":"a"}` {
		t.Errorf("sink saw before %q, after %q", before, after)
	}

	l.BeforeToolCall = false
	if set, err = exact(l); err != nil || lookup(set.Env, hookrpc.SocketEnv) != "" || strings.Contains(lookup(set.Env, ConfigContentEnv), PluginFile) {
		t.Errorf("without handlers: %q, %v", set.Env, err)
	}
}
