//go:build channels

// An experiment, not a test of relay: does Claude Code's "channels"
// feature (an MCP server declaring the experimental capability
// "claude/channel" sends notifications/claude/channel {content, meta}, which
// Claude Code enqueues into the running session) work offline, with an API
// key and a mock model, so that relay could push incoming messages instead of
// typing them? Run it with
//
//	go test -tags 'sqlite_fts5 channels' -run TestChannels -count=1 -v ./internal/e2e/
//
// It logs what Claude Code's debug log says about the channel gate and, if a
// notification ever reaches the model, the latency from notification to the
// model's request. See docs/mcp.md, "Pushing into a running session".

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// channelServerEnv, when set in the environment of this test binary, makes
// it a channel MCP server over stdio (see init) instead of running tests:
// its value is the Unix socket where the experiment sends what to push.
const channelServerEnv = "RELAY_CHANNEL_SERVER_SOCKET"

// channelProtocolEnv is the protocol revision the channel server accepts;
// Claude Code skips channels on a connection of the "modern" era
// (2026-07-28, the latest of go-sdk v1.8.0).
const channelProtocolEnv = "RELAY_CHANNEL_SERVER_PROTOCOL"

func init() {
	if sock := os.Getenv(channelServerEnv); sock != "" {
		if err := serveChannel(sock, os.Getenv(channelProtocolEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "channel server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// serveChannel is a minimal MCP server over stdio, written by hand because
// the Go SDK cannot send a notification method it does not know: it
// declares the "claude/channel" capability, has no tools, and pushes each
// line written to the Unix socket sock as notifications/claude/channel.
func serveChannel(sock, protocol string) error {
	var mu sync.Mutex
	out := json.NewEncoder(os.Stdout)
	send := func(v any) {
		mu.Lock()
		defer mu.Unlock()
		_ = out.Encode(v)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/claude/channel",
						"params": map[string]any{"content": sc.Text(), "meta": map[string]any{"from": "Bob"}}})
					fmt.Fprintf(c, "sent\n")
				}
			}()
		}
	}()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification
		}
		fmt.Fprintf(os.Stderr, "channel server: %s %s\n", req.Method, req.Params.ProtocolVersion)
		switch req.Method {
		case "initialize":
			v := protocol
			if v == "" {
				v = "2025-06-18"
			}
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{
				"protocolVersion": v,
				"capabilities":    map[string]any{"experimental": map[string]any{"claude/channel": map[string]any{}}, "tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "relaych", "version": "0"},
				"instructions":    "Messages from your team arrive as <channel> events; answer them.",
			}})
		case "tools/list":
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"tools": []any{}}})
		case "ping":
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{}})
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		}
	}
	return in.Err()
}

// channelRun is one Claude Code session with the channel server registered.
type channelRun struct {
	term  *agenttest.Term
	model *mockmodel.Anthropic
	sock  string
	debug string
}

// startChannels starts the pinned Claude Code offline against a mock model
// with the channel server "relaych" registered through --mcp-config and
// named by flag ("--channels" or "--dangerously-load-development-channels"),
// and answers the development-channels dialog if it shows.
func startChannels(t *testing.T, flag, protocol string, flags map[string]any, script mockmodel.Script, env ...string) *channelRun {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "relaych-") // short: a Unix socket path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := &channelRun{sock: filepath.Join(dir, "s"), debug: filepath.Join(dir, "debug.log")}
	r.model = mockmodel.NewAnthropic(mockmodel.Options{Script: script})
	t.Cleanup(r.model.Close)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"relaych": map[string]any{
		"type": "stdio", "command": self,
		"env": map[string]string{channelServerEnv: r.sock, channelProtocolEnv: protocol},
	}}})
	cmd := agenttest.Claude(t, agenttest.ClaudeOptions{
		Model: r.model.URL, Env: env,
		ExtraArgs: []string{"--mcp-config", string(cfg), "--debug-file", r.debug, flag, "server:relaych"},
	})
	if flags != nil {
		cacheFlags(t, cmd.ConfigDir, flags)
	}
	r.term = agenttest.Start(t, cmd)
	stopGently(t, r.term)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		screen := agenttest.TmuxScreen(t, r.term.Raw(), 100, 30)
		if strings.Contains(screen, "I am using this for local development") {
			t.Logf("development channels dialog:\n%s", screen)
			r.term.Enter() // the first choice
			time.Sleep(300 * time.Millisecond)
			continue
		}
		if agenttest.ClaudeReady(screen) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := r.term.WaitReady(30*time.Second, agenttest.ClaudeReady); err != nil {
		t.Fatalf("Claude Code not ready: %v\n%s", err, agenttest.TmuxScreen(t, r.term.Raw(), 100, 30))
	}
	// The server is connected when Claude Code asked for its tools.
	r.waitDebug(t, regexp.MustCompile(`relaych.*(Channel notifications|connected|Successfully)`), 30*time.Second)
	return r
}

// waitDebug waits until Claude Code's debug log matches re and returns the
// matching lines.
func (r *channelRun) waitDebug(t *testing.T, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b, _ := os.ReadFile(r.debug)
		var hits []string
		for _, l := range strings.Split(string(b), "\n") {
			if re.MatchString(l) {
				hits = append(hits, l)
			}
		}
		if len(hits) > 0 || time.Now().After(deadline) {
			return hits
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// push sends text through the channel server and returns when the server
// has written the notification.
func (r *channelRun) push(t *testing.T, text string) time.Time {
	t.Helper()
	c, err := net.Dial("unix", r.sock)
	if err != nil {
		t.Fatalf("dial the channel server: %v", err)
	}
	defer c.Close()
	at := time.Now()
	fmt.Fprintf(c, "%s\n", text)
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		t.Fatalf("the channel server did not push: %v", err)
	}
	return at
}

// TestChannels reports, for each way of naming the server, what the channel
// gate decided and whether pushed text reached the model: while idle as a
// new turn, while busy queued after the turn. It fails only if the
// experiment itself breaks; its findings are in the log.
func TestChannels(t *testing.T) {
	for _, c := range []struct {
		name, flag string
		protocol   string         // the revision the server answers; empty: 2025-06-18
		env        []string       // added to Claude Code's environment
		flags      map[string]any // written to Claude Code's feature-flag cache
	}{
		{name: "channels", flag: "--channels"},
		{name: "development", flag: "--dangerously-load-development-channels"},
		// Claude Code's internal feature-flag knobs: what it takes past
		// the "disabled" gate (neither is something relay could ship).
		{name: "development env override", flag: "--dangerously-load-development-channels",
			env: []string{`CLAUDE_INTERNAL_FC_OVERRIDES={"tengu_harbor":true}`}},
		{name: "development cached flag", flag: "--dangerously-load-development-channels",
			flags: map[string]any{"tengu_harbor": true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			gate := make(chan struct{})
			var once sync.Once
			r := startChannels(t, c.flag, c.protocol, c.flags, func(req mockmodel.Request) mockmodel.Reply {
				if strings.Contains(req.LastUser, "work slowly") {
					return mockmodel.Reply{Text: "Working.", Gate: gate}
				}
				return mockmodel.Reply{Text: "OK."}
			}, c.env...)
			defer once.Do(func() { close(gate) })
			decided := r.waitDebug(t, regexp.MustCompile(`Channel notifications (registered|skipped)`), 30*time.Second)
			if len(decided) == 0 {
				t.Fatal("Claude Code's debug log never says what the channel gate decided")
			}
			t.Logf("RESULT %s: gate: %s", c.name, decided[0])
			for _, l := range r.waitDebug(t, channelLines, time.Second) {
				t.Logf("debug: %s", l)
			}
			// Idle: does a push start a turn?
			var lat []time.Duration
			for i := range 5 {
				text := fmt.Sprintf("idle push %d: please rerun the auth tests", i)
				at := r.push(t, text)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				req, err := r.model.WaitForRequest(ctx, text)
				cancel()
				if err != nil {
					t.Logf("RESULT %s: an idle push did not reach the model within 10 s", c.name)
					for _, l := range r.waitDebug(t, channelLines, time.Second) {
						t.Logf("debug: %s", l)
					}
					t.Logf("screen:\n%s", agenttest.TmuxScreen(t, r.term.Raw(), 100, 30))
					return
				}
				lat = append(lat, req.Time.Sub(at))
				if i == 0 {
					t.Logf("the model got: %q", req.LastUser)
				}
				if _, err := r.term.WaitReady(30*time.Second, agenttest.ClaudeReady); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("RESULT %s: idle pushes reached the model as new turns; latency push -> model request: %v", c.name, lat)
			// Busy: is a push queued until the turn ends?
			r.term.Submit("work slowly")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := r.model.WaitForRequest(ctx, "work slowly"); err != nil {
				t.Fatal(err)
			}
			const busy = "busy push: Bob says the build is green"
			r.push(t, busy)
			time.Sleep(2 * time.Second) // a fixed window: does it interrupt the held turn?
			during := r.model.Count(busy)
			once.Do(func() { close(gate) })
			req, err := r.model.WaitForRequest(ctx, busy)
			if err != nil {
				t.Logf("RESULT %s: a busy push never reached the model: %v", c.name, err)
				return
			}
			t.Logf("RESULT %s: busy push seen by the model during the held turn: %d times; after it, in turn %d: %q", c.name, during, req.Turn, req.LastUser)
		})
	}
}

// channelLines matches what Claude Code's debug log says about channels
// (not the temporary paths, which carry the test's name).
var channelLines = regexp.MustCompile(`Channel notifications|Channel gate|notifications/claude/channel|channels aren|--channels|development-channels|protocolEra|Server stderr`)

// cacheFlags writes feature flags into the cache of Claude Code's state
// file (.claude.json in configDir, cachedGrowthBookFeatures), where it
// keeps the flags it last fetched: offline, it never fetches them.
func cacheFlags(t *testing.T, configDir string, flags map[string]any) {
	t.Helper()
	p := filepath.Join(configDir, ".claude.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]any{}
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatal(err)
	}
	state["cachedGrowthBookFeatures"], state["cachedFeatureFlags"] = flags, flags
	b, _ = json.Marshal(state)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestChannelsRelayEra logs the protocol revision and era Claude Code
// negotiates with relay's own server (go-sdk v1.8.0): channels are skipped
// on a "modern" (2026-07-28) connection whatever the flags.
func TestChannelsRelayEra(t *testing.T) {
	m := mockmodel.NewAnthropic(mockmodel.Options{})
	t.Cleanup(m.Close)
	debug := filepath.Join(t.TempDir(), "debug.log")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"relay": map[string]any{
		"type": "stdio", "command": relayBin, "args": []string{"mcp"},
		"env": map[string]string{"RELAY_HOME": filepath.Join(t.TempDir(), "home"), "USER": "tester"},
	}}})
	term := agenttest.Start(t, agenttest.Claude(t, agenttest.ClaudeOptions{Model: m.URL,
		ExtraArgs: []string{"--mcp-config", string(cfg), "--debug-file", debug}}))
	stopGently(t, term)
	r := &channelRun{debug: debug}
	hits := r.waitDebug(t, regexp.MustCompile(`MCP server "relay".*protocolEra`), 60*time.Second)
	if len(hits) == 0 {
		t.Fatal("Claude Code never connected to relay mcp")
	}
	for _, l := range hits {
		t.Logf("RESULT relay mcp: %s", l)
	}
}
