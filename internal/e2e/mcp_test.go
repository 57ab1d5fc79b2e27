package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// deployConfig is a project configuration with a user namespace whose
// handler appends one line per run to ran.log and prints what it did.
const deployConfig = `[patterns.deploy]
command = 'printf "%s %s\n" "$RELAY_TARGET" "$RELAY_MESSAGE" >> ran.log; echo "deployed $RELAY_MESSAGE to $RELAY_TARGET as $RELAY_AGENT"'
allow = [ALLOW]
cwd = "."
`

// mcpProject writes a project folder with deployConfig, allowed for the
// agents named, and returns it.
func mcpProject(t *testing.T, allow ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".relay"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".relay", "config.toml"), []byte(strings.Replace(deployConfig, "ALLOW", `"`+strings.Join(allow, `", "`)+`"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// mcpClient starts `relay mcp` with args in dir, against the team's hub,
// and connects the SDK's client to it over stdio.
func (tm *team) mcpClient(dir string, env []string, args ...string) *mcp.ClientSession {
	tm.t.Helper()
	cmd := exec.Command(relayBin, append([]string{"mcp"}, args...)...)
	cmd.Env, cmd.Dir, cmd.Stderr = append(slices.Clone(tm.env), env...), dir, testWriter{tm.t}
	client := mcp.NewClient(&mcp.Implementation{Name: "relay-e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		tm.t.Fatalf("connect to relay mcp: %v", err)
	}
	tm.t.Cleanup(func() { cs.Close() })
	return cs
}

// testWriter logs a process's stderr in the test's output.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("relay mcp stderr: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// call calls a tool and returns its text and whether it is a tool error;
// a protocol error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", tool, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// mustCall calls a tool that must succeed and returns its text.
func mustCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	text, isErr := call(t, cs, tool, args)
	if isErr {
		t.Fatalf("%s(%v) failed: %s", tool, args, text)
	}
	return text
}

var memIDRe = regexp.MustCompile(`\[([0-9a-z]{8})\]`)

// TestMCPProtocol: the SDK's client talks to the relay binary over stdio:
// initialize, list the tools, call each one; a peer gets what send sent
// once; the user namespace runs its handler once, for allowed agents only;
// bad arguments are MCP errors and the server keeps answering.
func TestMCPProtocol(t *testing.T) {
	tm := newTeam(t)
	dir := mcpProject(t, "Alice")
	bob := tm.agent("Bob", "bash", "--norc", "--noprofile")
	tm.waitAgents("Bob")
	// Inside a wrapped agent RELAY_NAME says who it is.
	cs := tm.mcpClient(dir, []string{"RELAY_NAME=Alice"})

	if got := cs.InitializeResult().ServerInfo.Name; got != "relay" {
		t.Errorf("server name %q, want relay", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s has no description or schema", tool.Name)
		}
	}
	slices.Sort(names)
	want := []string{"agents", "deploy", "inbox", "log", "memory_forget", "memory_list", "memory_save", "memory_search", "send"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}

	t.Run("send", func(t *testing.T) {
		const body = "rerun the flaky auth tests"
		out := mustCall(t, cs, "send", map[string]any{"to": "Bob", "message": body})
		if !strings.Contains(out, "Sent to Bob as message") || !strings.Contains(out, "Bob ") {
			t.Errorf("send said %q", out)
		}
		bob.WaitOutput(body, 30*time.Second)
		testutil.Eventually(t, func() error {
			if out := mustCall(t, cs, "log", map[string]any{"with": "Bob"}); !strings.Contains(out, "Bob delivered") && !strings.Contains(out, "Bob seen") {
				return fmt.Errorf("log with Bob: %q", out)
			}
			return nil
		})
		// Readline redraws what is typed, so count on the screen.
		if n := strings.Count(ptytest.Screen(t, bob.Output(), 100, 30), body); n != 1 {
			t.Errorf("Bob's screen shows the message %d times", n)
		}
	})
	t.Run("agents", func(t *testing.T) {
		if out := mustCall(t, cs, "agents", nil); !strings.Contains(out, "- Bob: shell, ") {
			t.Errorf("agents said %q", out)
		}
	})
	t.Run("inbox", func(t *testing.T) {
		if out, err := tm.relay("send", "--from", "Bob", "Alice", "Done: 2 failures, @relay:Carol see auth_test.go:41"); err != nil {
			t.Fatalf("relay send: %v\n%s", err, out)
		}
		out := mustCall(t, cs, "inbox", map[string]any{"n": 5})
		if !strings.Contains(out, "Bob -> Alice") || !strings.Contains(out, "Done: 2 failures") {
			t.Errorf("inbox said %q", out)
		}
		// A peer's text is shown, never obeyed: its @relay: is neutralised.
		if strings.Contains(out, "@relay:Carol") || !strings.Contains(out, "＠relay:Carol") {
			t.Errorf("inbox did not neutralise the peer's command: %q", out)
		}
	})
	t.Run("memory", func(t *testing.T) {
		out := mustCall(t, cs, "memory_save", map[string]any{"text": "The staging database resets every night at 02:00 UTC", "tags": []string{"ops"}})
		m := memIDRe.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("memory_save said %q", out)
		}
		if out := mustCall(t, cs, "memory_search", map[string]any{"query": "staging database", "limit": 3}); !strings.Contains(out, "resets every night") || !strings.Contains(out, "Alice") {
			t.Errorf("memory_search said %q", out)
		}
		if out := mustCall(t, cs, "memory_list", map[string]any{"n": 5}); !strings.Contains(out, m[1]) {
			t.Errorf("memory_list said %q", out)
		}
		if out := mustCall(t, cs, "memory_forget", map[string]any{"id": m[1]}); !strings.Contains(out, "forgot ["+m[1]+"]") {
			t.Errorf("memory_forget said %q", out)
		}
		if out := mustCall(t, cs, "memory_search", map[string]any{"query": "staging database"}); !strings.Contains(out, "nothing found") {
			t.Errorf("after forget, memory_search said %q", out)
		}
	})
	t.Run("namespace", func(t *testing.T) {
		out := mustCall(t, cs, "deploy", map[string]any{"target": "staging", "body": "v1.2.3"})
		if strings.TrimSpace(out) != "deployed v1.2.3 to staging as Alice" {
			t.Errorf("deploy said %q", out)
		}
		ran, err := os.ReadFile(filepath.Join(dir, "ran.log"))
		if err != nil || string(ran) != "staging v1.2.3\n" {
			t.Errorf("the handler ran: %q, %v; want once", ran, err)
		}
		// Eve is not on the allow list: refused, nothing runs.
		eve := tm.mcpClient(dir, []string{"RELAY_NAME=Eve"})
		if out, isErr := call(t, eve, "deploy", map[string]any{"target": "prod", "body": "v9"}); !isErr || !strings.Contains(out, "only Alice may use it") {
			t.Errorf("Eve's deploy: error %v, %q", isErr, out)
		}
		if ran, _ := os.ReadFile(filepath.Join(dir, "ran.log")); string(ran) != "staging v1.2.3\n" {
			t.Errorf("after Eve's refused deploy the handler log is %q", ran)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		for _, c := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"send", map[string]any{"to": "Bob"}, "message"},
			{"send", map[string]any{"to": "Bob", "message": 42}, "message"},
			{"send", map[string]any{"to": "no such name!", "message": "hi"}, "recipient"},
			{"send", map[string]any{"to": "Alice", "message": "hi"}, "is you"},
			{"send", map[string]any{"to": "Bob", "message": "   "}, "empty"},
			{"send", map[string]any{"to": "Bob", "message": strings.Repeat("x", 70<<10)}, "limit"},
			{"log", map[string]any{"n": -1}, "n is -1"},
			{"log", map[string]any{"with": "a b"}, "with"},
			{"memory_search", map[string]any{"query": ""}, "no words"},
			{"memory_list", map[string]any{"n": "ten"}, "n"},
			{"memory_forget", map[string]any{"id": "zzzzzzzz"}, "not found"},
			{"deploy", map[string]any{"target": "two words"}, "white space"},
			{"agents", map[string]any{"extra": true}, "extra"},
		} {
			out, isErr := call(t, cs, c.tool, c.args)
			if !isErr || !strings.Contains(out, c.want) {
				t.Errorf("%s(%.60v): error %v, %q; want an error about %q", c.tool, c.args, isErr, out, c.want)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
			t.Error("an unknown tool was not a protocol error")
		}
		// Still answering.
		if out := mustCall(t, cs, "agents", nil); !strings.Contains(out, "Bob") {
			t.Errorf("after bad calls, agents said %q", out)
		}
	})
}

// TestMCPWithoutHub: the server starts and lists its tools with no hub;
// a call that needs the hub is a tool error saying so.
func TestMCPWithoutHub(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	tm := &team{t: t, env: append(baseEnv(t), "RELAY_HOME="+home, "USER=tester")}
	cs := tm.mcpClient(t.TempDir(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if tools, err := cs.ListTools(ctx, nil); err != nil || len(tools.Tools) != 8 {
		t.Fatalf("tools without a hub: %v, %v", tools, err)
	}
	out, isErr := call(t, cs, "send", map[string]any{"to": "Bob", "message": "hello"})
	if !isErr || !strings.Contains(out, "no hub running") || !strings.Contains(out, "relay up") {
		t.Errorf("send without a hub: error %v, %q", isErr, out)
	}
}

// mcpScript is a model that, once told to kick off, calls the MCP tools of
// calls in order (searching for each first where the CLI defers them) and
// then answers done. Each call's result must contain its want before the
// next call is made.
type mcpCall struct {
	tool  string
	input map[string]any
	want  string // in the tool's result
	text  string // written before the call (an @relay: line, say), in the first reply that makes it
}

func mcpScript(t *testing.T, calls ...mcpCall) mockmodel.Script {
	var mu sync.Mutex
	next, started := 0, false
	calls = slices.Clone(calls)
	return func(r mockmodel.Request) mockmodel.Reply {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(r.LastUser, "kick off") {
			started = true
		}
		if !started || next == len(calls) {
			return mockmodel.Reply{Text: "OK."}
		}
		if strings.Contains(r.LastUser, calls[next].want) {
			next++
			if next == len(calls) {
				return mockmodel.Reply{Text: "All done."}
			}
		}
		c := &calls[next]
		reply, ok := mockmodel.CallTool(r, c.text, c.tool, c.input)
		c.text = "" // once
		if !ok {
			t.Errorf("turn %d offers neither %s nor a tool search: %v", r.Turn, calls[next].tool, r.Tools)
			return mockmodel.Reply{Text: "I cannot find the tool."}
		}
		return reply
	}
}

// TestMCPClaude: Claude Code's model calls relay's send tool to Bob (a
// Codex) and memory_search, through the server relay wrap registered
// (MCP tools deferred behind ToolSearch, as by default, and allowed
// without a dialog); Bob's model receives the message word for word, once;
// the search result comes back to Claude's model as the tool's result. The
// same reply also writes an @relay:Bob line: both ways in one reply, each
// message delivered once.
func TestMCPClaude(t *testing.T) {
	tm := newTeam(t)
	const toBob = "Bob, the nightly build broke in pkg/auth: please bisect it between v1.3.0 and main and tell me the first bad commit."
	const fact = "The staging database resets every night at 02:00 UTC"
	const lineToBob = "Also check whether the flaky retry test in client_test.go fails on main."
	if out, err := tm.relay("memory", "save", fact); err != nil {
		t.Fatalf("relay memory save: %v\n%s", err, out)
	}
	alice := tm.claude("Alice", 100, 30, mcpScript(t,
		// Both ways in one reply: a line and the tool.
		mcpCall{"mcp__relay__send", map[string]any{"to": "Bob", "message": toBob}, "Sent to Bob as message", "Asking Bob.\n\n@relay:Bob " + lineToBob + "\n\nNow the tool."},
		mcpCall{"mcp__relay__memory_search", map[string]any{"query": "staging database"}, fact, ""},
	))
	codexModel := mockmodel.NewResponses(mockmodel.Options{Script: mockmodel.Fixed("On it.")})
	t.Cleanup(codexModel.Close)
	bob := agenttest.Start(t, agenttest.Codex(t, agenttest.CodexOptions{Model: codexModel.URL, Env: tm.relayEnv()}).
		Under(relayBin, "wrap", "--name", "Bob", "--"))
	stopGently(t, bob)
	if _, err := bob.WaitReady(60*time.Second, agenttest.CodexReady); err != nil {
		t.Fatalf("Codex not ready: %v", err)
	}
	tm.waitAgents("Alice", "Bob")

	alice.term.Submit("kick off the bisect")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := codexModel.WaitForRequest(ctx, toBob); err != nil {
		t.Fatalf("Bob's model never got the message: %v\nAlice's screen:\n%s\nlogs:\n%s", err,
			agenttest.TmuxScreen(t, alice.term.Raw(), 100, 30), tm.wrapperLog())
	}
	// A permission dialog would stop the turn here: the tools are allowed.
	res := alice.waitTurn(t, fact, 60*time.Second)
	if !strings.Contains(string(res.Body), `"tool_result"`) {
		t.Errorf("the search result did not come back as a tool result: %s", res.LastUser)
	}
	for _, r := range alice.model.Turns() {
		t.Logf("Alice's turn %d offered %d tools, relay's: %q, ToolSearch: %v", r.Turn, len(r.Tools), r.FindTool("__send"), r.HasTool(mockmodel.ToolSearch))
	}
	if _, err := codexModel.WaitForRequest(ctx, lineToBob); err != nil {
		t.Fatalf("Bob's model never got the @relay: line: %v", err)
	}
	for _, body := range []string{toBob, lineToBob} {
		if n := codexModel.Count(body); n != 1 {
			t.Errorf("Bob's model got %q %d times", body, n)
		}
	}
	// The message is from Alice, as the log shows.
	testutil.Eventually(t, func() error {
		out, err := tm.relay("log")
		if err != nil {
			return err
		}
		if !strings.Contains(out, "Alice -> Bob") {
			return fmt.Errorf("no message from Alice to Bob in the log:\n%s", out)
		}
		return nil
	})
}

// TestMCPCodexAndGemini: Codex's and Gemini CLI's models call relay's send
// tool through the server relay wrap registered for them; Alice (a shell)
// gets each message once, from the right sender.
func TestMCPCodexAndGemini(t *testing.T) {
	tm := newTeam(t)
	// Gemini CLI skips a settings file below a folder that others can
	// write (/tmp, where t.TempDir is): the state folder, where relay
	// writes its overlay, must be below a private one.
	home := privateHome(t)
	for i, kv := range tm.env {
		if strings.HasPrefix(kv, "RELAY_HOME=") {
			tm.env[i] = "RELAY_HOME=" + home
		}
	}
	const fromBob = "Bob here: the retry loop in client.go is fixed, please pull"
	const fromCarol = "Carol here: release notes for v1.4 are in RELEASE.md"
	alice := tm.agent("Alice", "bash", "--norc", "--noprofile")
	tm.waitAgents("Alice")

	// Bob's project configures @deploy: Bob's model calls it as a tool;
	// the handler runs once and its output is the tool's result.
	project := mcpProject(t, "Bob")
	codexModel := mockmodel.NewResponses(mockmodel.Options{Script: mcpScript(t,
		mcpCall{"send", map[string]any{"to": "Alice", "message": fromBob}, "Sent to Alice as message", ""},
		mcpCall{"deploy", map[string]any{"target": "staging", "body": "v1.2.3"}, "deployed v1.2.3 to staging as Bob", ""})})
	t.Cleanup(codexModel.Close)
	bob := agenttest.Start(t, agenttest.Codex(t, agenttest.CodexOptions{Model: codexModel.URL, Env: tm.relayEnv(), WorkDir: project}).
		Under(relayBin, "wrap", "--name", "Bob", "--"))
	stopGently(t, bob)

	geminiModel := mockmodel.NewGemini(mockmodel.Options{Script: mcpScript(t,
		mcpCall{"send", map[string]any{"to": "Alice", "message": fromCarol}, "Sent to Alice as message", ""})})
	t.Cleanup(geminiModel.Close)
	carol := agenttest.Start(t, agenttest.Gemini(t, agenttest.GeminiOptions{Model: geminiModel.URL, Env: tm.relayEnv()}).
		Under(relayBin, "wrap", "--name", "Carol", "--"))
	stopGently(t, carol)

	if _, err := bob.WaitReady(60*time.Second, agenttest.CodexReady); err != nil {
		t.Fatalf("Codex not ready: %v", err)
	}
	if _, err := carol.WaitReady(60*time.Second, agenttest.GeminiReady); err != nil {
		t.Fatalf("Gemini not ready: %v", err)
	}
	tm.waitAgents("Alice", "Bob", "Carol")
	// Each has been primed (typed in, a turn of its own) before it is asked.
	for who, m := range map[string]modelLog{"Bob": codexModel, "Carol": geminiModel} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		_, err := m.WaitForRequest(ctx, `relay's tools`)
		cancel()
		if err != nil {
			t.Fatalf("%s's primer does not name relay's tools: %v", who, err)
		}
	}
	for who, a := range map[string]struct {
		term *agenttest.Term
		m    modelLog
	}{"Bob": {bob, codexModel}, "Carol": {carol, geminiModel}} {
		ask := "kick off: tell Alice, " + who
		if _, err := a.term.SubmitConfirm(ask, 0, 30*time.Second, func() bool { return a.m.Count(ask) > 0 }); err != nil {
			t.Fatalf("%s: %v", who, err)
		}
	}
	for who, c := range map[string]struct {
		m    modelLog
		body string
	}{"Bob": {codexModel, fromBob}, "Carol": {geminiModel, fromCarol}} {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		_, err := c.m.WaitForRequest(ctx, "Sent to Alice as message")
		cancel()
		if err != nil {
			term := map[string]*agenttest.Term{"Bob": bob, "Carol": carol}[who]
			cols, rows := term.Size()
			t.Fatalf("%s's send never returned its result to the model: %v\nscreen:\n%s\nlogs:\n%s", who, err,
				agenttest.TmuxScreen(t, term.Raw(), cols, rows), tm.wrapperLog())
		}
		alice.WaitOutput(c.body, 30*time.Second)
	}
	screen := ptytest.Screen(t, alice.Output(), 100, 30)
	for _, body := range []string{fromBob, fromCarol} {
		if n := strings.Count(screen, body); n != 1 {
			t.Errorf("Alice's screen shows %q %d times:\n%s", body, n, screen)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := codexModel.WaitForRequest(ctx, "deployed v1.2.3 to staging as Bob"); err != nil {
		t.Errorf("the deploy handler's output did not come back to Bob's model: %v", err)
	}
	if ran, err := os.ReadFile(filepath.Join(project, "ran.log")); err != nil || string(ran) != "staging v1.2.3\n" {
		t.Errorf("the deploy handler ran: %q, %v; want once", ran, err)
	}
	out, err := tm.relay("log")
	if err != nil || !strings.Contains(out, "Bob -> Alice") || !strings.Contains(out, "Carol -> Alice") {
		t.Errorf("log (%v):\n%s", err, out)
	}
}

// privateHome is a state folder below the user's home (no folder on its
// path is writable by others), removed when the test ends.
func privateHome(t *testing.T) string {
	t.Helper()
	base := filepath.Join(os.Getenv("HOME"), ".cache")
	if err := os.MkdirAll(base, 0o700); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(base, "relay-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "home")
}
