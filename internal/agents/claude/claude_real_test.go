package claude_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents/claude"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// relayBuild is the relay binary the tests that run it build once, into
// the folder TestMain makes and removes.
type relayBuild struct {
	dir  string
	once sync.Once
	path string
	err  error
}

var built relayBuild

func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "agents-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		built.dir = dir
		return m.Run()
	}())
}

// relayBuilt returns the relay binary, building it on first use.
func relayBuilt(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		built.path = filepath.Join(built.dir, "relay")
		out, err := exec.Command("go", "build", "-o", built.path, "github.com/relayhq/relay/cmd/relay").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build ./cmd/relay: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// relayBinary is relayBuilt for the tests that also run Claude Code: it
// skips them when Claude Code is not installed.
func relayBinary(t testing.TB) string {
	t.Helper()
	agenttest.Binary(t, "claude")
	return relayBuilt(t)
}

// hookLog plays the wrapper's part for a test: a hook server that records
// every hook Claude Code ran, in order, and answers them with answer.
type hookLog struct {
	path string

	mu      sync.Mutex
	hooks   []claude.Hook
	seen    map[string]int             // per event: how many next has returned
	latency map[string][]time.Duration // per event: relay hook start → handler
	answer  func(claude.Hook) string   // nil or "": no answer

	// As a wrapper does, inside the hooks: a transcript reader opened at
	// SessionStart and read at PostToolUse and Stop.
	reader   *claude.TranscriptReader
	texts    []string   // every text the reader returned, in order
	atStop   [][]string // what it returned at each Stop
	readErrs []error
}

func newHookLog(t *testing.T) *hookLog {
	t.Helper()
	s, err := hookrpc.Listen(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hl := &hookLog{path: s.Path(), seen: map[string]int{}, latency: map[string][]time.Duration{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, hl.handle(t)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return hl
}

func (hl *hookLog) handle(t *testing.T) hookrpc.Handler {
	return func(ctx context.Context, req hookrpc.Request) hookrpc.Response {
		h, err := claude.ParseHook(req.Payload)
		if err != nil {
			t.Errorf("hook %s: %v", req.Event, err)
			return hookrpc.Response{}
		}
		if h.HookEventName != req.Event {
			t.Errorf("relay hook %s got the payload of %s", req.Event, h.HookEventName)
		}
		limit := hookrpc.Limit(req.Event)
		hl.mu.Lock()
		defer hl.mu.Unlock()
		hl.latency[req.Event] = append(hl.latency[req.Event], time.Since(req.Deadline.Add(-limit)))
		hl.hooks = append(hl.hooks, h)
		hl.read(h)
		if hl.answer != nil {
			return hookrpc.Response{Stdout: hl.answer(h)}
		}
		return hookrpc.Response{}
	}
}

// read plays the wrapper's transcript reading for hook h.
func (hl *hookLog) read(h claude.Hook) {
	var texts []string
	var err error
	switch {
	case h.HookEventName == "SessionStart":
		hl.reader, err = claude.NewTranscriptReader(h.TranscriptPath)
	case hl.reader == nil:
		return
	case h.HookEventName == "Stop":
		texts, err = hl.reader.Stop(h)
		hl.atStop = append(hl.atStop, texts)
	default:
		if h.HookEventName == "PostToolUse" {
			hl.reader.Await(h.ToolUseID)
		}
		texts, err = hl.reader.Next()
	}
	hl.texts = append(hl.texts, texts...)
	if err != nil {
		hl.readErrs = append(hl.readErrs, err)
	}
}

// lastStop returns what the transcript reader returned at the last Stop.
func (hl *hookLog) lastStop() []string {
	hl.mu.Lock()
	defer hl.mu.Unlock()
	if len(hl.atStop) == 0 {
		return nil
	}
	return hl.atStop[len(hl.atStop)-1]
}

// next waits for the next hook of event that it has not returned yet.
func (hl *hookLog) next(t *testing.T, event string) claude.Hook {
	t.Helper()
	var got claude.Hook
	testutil.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		hl.mu.Lock()
		defer hl.mu.Unlock()
		n := 0
		var names []string
		for _, h := range hl.hooks {
			names = append(names, h.HookEventName)
			if h.HookEventName != event {
				continue
			}
			if n == hl.seen[event] {
				hl.seen[event]++
				got = h
				return nil
			}
			n++
		}
		return fmt.Errorf("no new %s hook; hooks so far: %v", event, names)
	})
	return got
}

func (hl *hookLog) setAnswer(f func(claude.Hook) string) {
	hl.mu.Lock()
	hl.answer = f
	hl.mu.Unlock()
}

// startClaude starts the real Claude Code against m with relay's hook
// settings, its hooks reaching hl, and waits until it is ready.
func startClaude(t *testing.T, m *mockmodel.Anthropic, hl *hookLog, extra ...string) *agenttest.Term {
	t.Helper()
	settings, err := claude.Settings(relayBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	cmd := agenttest.Claude(t, agenttest.ClaudeOptions{Model: m.URL,
		ExtraArgs: append([]string{"--settings", settings}, extra...),
		Env:       []string{hookrpc.SocketEnv + "=" + hl.path}})
	term := agenttest.Start(t, cmd)
	if _, err := term.WaitReady(60*time.Second, agenttest.ClaudeReady); err != nil {
		t.Fatal(err)
	}
	return term
}

func submit(t *testing.T, term *agenttest.Term, m *mockmodel.Anthropic, prompt string) {
	t.Helper()
	if _, err := term.SubmitConfirm(prompt, 0, 20*time.Second, func() bool { return m.Count(prompt) > 0 }); err != nil {
		t.Fatal(err)
	}
}

// multiText is the assistant's reply of the recording multi-80x24: escapes,
// inline mentions and a code fence that the screen loses.
func multiText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "recordings", "claude-code-"+agenttest.ClaudeVersion, "multi-80x24.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		AssistantText string `json:"assistant_text"`
	}
	if err := json.Unmarshal(b, &rec); err != nil || !strings.Contains(rec.AssistantText, `\@relay:Nobody`) ||
		!strings.Contains(rec.AssistantText, "```") {
		t.Fatalf("recording has no assistant_text with an escape and a fence: %v", err)
	}
	return rec.AssistantText
}

// TestClaudeHooksReal runs the real Claude Code with relay's hook settings
// and checks what a wrapper learns through them: the session, the exact
// prompt, the exact reply at Stop, the texts of a turn with a tool call,
// and that a Stop answered with StopBlock hands a message to the model.
func TestClaudeHooksReal(t *testing.T) {
	reply := multiText(t)
	beforeTool := "Checking first.\n\n@relay:Bob before the tool"
	afterTool := "All good after the tool.\n\n@relay:Carol after the tool"
	m := mockmodel.NewAnthropic(mockmodel.Options{Script: mockmodel.Queue(
		mockmodel.Reply{Text: reply},
		mockmodel.Reply{Text: beforeTool, ToolUse: &mockmodel.ToolUse{Name: "Bash",
			Input: map[string]any{"command": "true", "description": "Run true"}}},
		mockmodel.Reply{Text: afterTool},
		mockmodel.Reply{Text: "First answer."},
		mockmodel.Reply{Text: "Running the tests now."},
	)})
	t.Cleanup(m.Close)
	hl := newHookLog(t)
	term := startClaude(t, m, hl)

	start := hl.next(t, "SessionStart")
	if start.Source != "startup" || start.SessionID == "" || start.Model == "" || !strings.HasSuffix(start.TranscriptPath, ".jsonl") {
		t.Errorf("SessionStart = %+v", start)
	}

	// 1. The exact prompt and the exact reply.
	prompt := "Report, please: keep \\@relay:x, `code` and \"quotes\" as typed."
	submit(t, term, m, prompt)
	if p := hl.next(t, "UserPromptSubmit"); p.Prompt != prompt || p.SessionID != start.SessionID || p.PromptID == "" {
		t.Errorf("UserPromptSubmit = %+v, want prompt %q", p, prompt)
	}
	stop := hl.next(t, "Stop")
	if stop.LastAssistantMessage != reply || stop.StopHookActive {
		t.Errorf("Stop: last_assistant_message = %q (stop_hook_active %v)\nwant %q", stop.LastAssistantMessage, stop.StopHookActive, reply)
	}
	if texts, err := claude.StopTexts(stop); err != nil || !slices.Equal(texts, []string{reply}) {
		t.Errorf("StopTexts = %q, %v", texts, err)
	}
	if texts := hl.lastStop(); !slices.Equal(texts, []string{reply}) {
		t.Errorf("TranscriptReader at Stop: %q, want the reply", texts)
	}
	var fired []string
	for _, c := range patterns.ExtractText(stop.LastAssistantMessage, patterns.Options{Mode: patterns.Markdown}) {
		fired = append(fired, c.NS+":"+c.Target)
	}
	if want := []string{"relay:Bob", "broadcast:", "memory:save"}; !slices.Equal(fired, want) {
		t.Errorf("commands in the exact reply: %q, want %q (no Nobody, Carol or Example)", fired, want)
	}

	// 2. A turn with a tool call: the text before the call is not lost,
	// and a message riding on PostToolUse reaches the model with the
	// tool's result.
	urgent := "[relay] Urgent message from agent Alice: stop the deploy"
	hl.setAnswer(func(h claude.Hook) string {
		if h.HookEventName == "PostToolUse" {
			return claude.AdditionalContext("PostToolUse", urgent)
		}
		return ""
	})
	submit(t, term, m, "use a tool")
	tool := hl.next(t, "PostToolUse")
	if tool.ToolName != "Bash" || tool.ToolUseID == "" || !strings.Contains(string(tool.ToolInput), `"command":"true"`) {
		t.Errorf("PostToolUse = %+v", tool)
	}
	stop = hl.next(t, "Stop")
	if stop.LastAssistantMessage != afterTool {
		t.Errorf("Stop after the tool: last_assistant_message = %q, want %q", stop.LastAssistantMessage, afterTool)
	}
	want := []string{beforeTool, afterTool}
	// StopTexts reads the file as it is: Claude Code writes it in the
	// background, so the text before the tool call may come a moment later.
	testutil.Eventually(t, func() error {
		if texts, err := claude.StopTexts(stop); err != nil || !slices.Equal(texts, want) {
			return fmt.Errorf("StopTexts = %q, %v; want %q", texts, err, want)
		}
		return nil
	})
	if texts := hl.lastStop(); len(texts) == 0 || texts[len(texts)-1] != afterTool {
		t.Errorf("TranscriptReader at Stop: %q, want it to end with the last message", texts)
	}
	if r, err := m.WaitForRequest(context.Background(), "Bash completed"); err != nil {
		t.Error(err)
	} else if role, text := lastMessage(t, r.Body); !strings.Contains(text, urgent) {
		t.Errorf("PostToolUse's additionalContext is not the last message of the next model request: %s %q", role, text)
	} else {
		t.Logf("the model got PostToolUse's context after the tool result as a %s message: %q", role, text)
	}
	testutil.Eventually(t, func() error {
		texts, err := claude.TurnTexts(stop.TranscriptPath)
		if err != nil || !slices.Equal(texts, want) {
			return fmt.Errorf("TurnTexts = %q, %v; want %q", texts, err, want)
		}
		return nil
	})

	// 3. A Stop answered with StopBlock: the reason reaches the model as
	// the next input; the following Stop says stop_hook_active.
	msg := "[relay] Message from agent Alice (id m-7): run the tests"
	hl.setAnswer(func(h claude.Hook) string {
		if h.HookEventName != "Stop" || h.StopHookActive {
			return ""
		}
		return claude.StopBlock(msg)
	})
	submit(t, term, m, "answer once")
	if s := hl.next(t, "Stop"); s.LastAssistantMessage != "First answer." || s.StopHookActive {
		t.Errorf("first Stop = %+v", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := m.WaitForRequest(ctx, msg)
	if err != nil {
		t.Fatalf("the blocked Stop's reason never reached the model: %v", err)
	}
	t.Logf("the model got the Stop reason as: %q", req.LastUser)
	s := hl.next(t, "Stop")
	if !s.StopHookActive || s.LastAssistantMessage != "Running the tests now." {
		t.Errorf("Stop after the block = %+v, want stop_hook_active and the new reply", s)
	}
	if texts := hl.lastStop(); !slices.Equal(texts, []string{"Running the tests now."}) {
		t.Errorf("TranscriptReader at the Stop after the block: %q, want only the new reply", texts)
	}
	if n := m.Count(msg); n != 1 {
		t.Errorf("the message reached the model %d times, want 1", n)
	}
	hl.mu.Lock()
	prompts := 0
	for _, h := range hl.hooks {
		if h.HookEventName == "UserPromptSubmit" {
			prompts++
		}
	}
	hl.mu.Unlock()
	if prompts != 3 {
		t.Errorf("%d UserPromptSubmit hooks, want 3: a Stop block's reason is not a prompt", prompts)
	}

	// 4. Leaving ends the session with SessionEnd.
	term.Submit("/exit")
	if end := hl.next(t, "SessionEnd"); end.SessionID != start.SessionID {
		t.Errorf("SessionEnd = %+v", end)
	} else {
		t.Logf("SessionEnd reason %q", end.Reason)
	}
	select {
	case <-term.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Claude Code did not exit after /exit")
	}
	// Once Claude Code has written everything, each assistant text came
	// out of the reader exactly once.
	hl.mu.Lock()
	texts, err := hl.reader.Next()
	all := append(hl.texts, texts...)
	errs := append(hl.readErrs, err)
	hl.mu.Unlock()
	if want := []string{reply, beforeTool, afterTool, "First answer.", "Running the tests now."}; !slices.Equal(all, want) {
		t.Errorf("TranscriptReader over the session: %q\nwant each text once: %q", all, want)
	}
	if err := errors.Join(errs...); err != nil {
		t.Errorf("TranscriptReader: %v", err)
	}
	hl.report(t, start.TranscriptPath)
}

// lastMessage returns the role and the text of the last message of an
// Anthropic Messages request body.
func lastMessage(t *testing.T, body []byte) (string, string) {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		t.Fatalf("model request without messages: %v", err)
	}
	last := req.Messages[len(req.Messages)-1]
	var s string
	if json.Unmarshal(last.Content, &s) == nil {
		return last.Role, s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(last.Content, &blocks)
	var texts []string
	for _, b := range blocks {
		texts = append(texts, b.Text)
	}
	return last.Role, strings.Join(texts, "\n")
}

// report logs how long the hooks took: from the start of relay hook to the
// wrapper's handler (this process), and Claude Code's own measure of the
// whole Stop hook (start to exit) from the transcript.
func (hl *hookLog) report(t *testing.T, transcript string) {
	t.Helper()
	hl.mu.Lock()
	for ev, ds := range hl.latency {
		t.Logf("relay hook %s: start → wrapper handler %v", ev, ds)
	}
	hl.mu.Unlock()
	b, err := os.ReadFile(transcript)
	if err != nil {
		t.Log(err)
		return
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var rec struct {
			Subtype   string `json:"subtype"`
			HookInfos []struct {
				Command    string `json:"command"`
				DurationMs int    `json:"durationMs"`
			} `json:"hookInfos"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Subtype == "stop_hook_summary" {
			for _, h := range rec.HookInfos {
				t.Logf("Claude Code measured %q: %d ms", filepath.Base(h.Command), h.DurationMs)
			}
		}
	}
}

// TestClaudeNotificationReal: a Bash call waiting for the human's
// permission runs PermissionRequest as the dialog opens, and Notification
// (permission_prompt) seconds later: the wrapper's cues not to type. An
// empty answer to PermissionRequest leaves the decision to the human.
func TestClaudeNotificationReal(t *testing.T) {
	m := mockmodel.NewAnthropic(mockmodel.Options{Script: mockmodel.Queue(
		mockmodel.Reply{Text: "Creating the marker.", ToolUse: &mockmodel.ToolUse{Name: "Bash",
			Input: map[string]any{"command": "touch marker", "description": "Create the marker"}}},
		mockmodel.Reply{Text: "The marker exists."},
	)})
	t.Cleanup(m.Close)
	hl := newHookLog(t)
	term := startClaude(t, m, hl, "--permission-mode", "default")
	submit(t, term, m, "make the marker")
	asked := time.Now()
	pr := hl.next(t, "PermissionRequest")
	t.Logf("PermissionRequest %v after the prompt", time.Since(asked).Round(time.Millisecond))
	if pr.ToolName != "Bash" || !strings.Contains(string(pr.ToolInput), "touch marker") {
		t.Errorf("PermissionRequest = %+v, want the Bash call", pr)
	}
	n := hl.next(t, "Notification")
	t.Logf("Notification %v after the prompt: type %q, message %q", time.Since(asked).Round(time.Millisecond), n.NotificationType, n.Message)
	if n.NotificationType != "permission_prompt" || n.Message == "" {
		t.Errorf("Notification = %+v, want a permission_prompt with a message", n)
	}
	if _, err := term.WaitReady(30*time.Second, agenttest.ClaudePermissionPrompt); err != nil {
		t.Fatal(err)
	}
	term.Enter()
	if s := hl.next(t, "Stop"); s.LastAssistantMessage != "The marker exists." {
		t.Errorf("Stop = %+v", s)
	}
}

// stopPayload is a Stop hook's stdin as Claude Code 2.1.328 writes it.
const stopPayload = `{"session_id":"9d4f7d2d-c5ff-4297-924a-f83d9364cc0b",` +
	`"transcript_path":"/home/u/.claude/projects/-work/9d4f7d2d-c5ff-4297-924a-f83d9364cc0b.jsonl","cwd":"/work",` +
	`"prompt_id":"dfeb4ca6-1704-4c8c-8777-c9fa915d4484","permission_mode":"auto","effort":{"level":"medium"},` +
	`"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done.\n\n@relay:Bob The schema migration is done.",` +
	`"background_tasks":[],"session_crons":[]}`

// runHookProcess runs `relay hook Stop` as Claude Code does (payload on
// stdin) and returns its stdout.
func runHookProcess(b *testing.B, relay, socket string) string {
	cmd := exec.Command(relay, "hook", "Stop")
	cmd.Stdin = strings.NewReader(stopPayload)
	if socket != "" {
		cmd.Env = append(os.Environ(), hookrpc.SocketEnv+"="+socket)
	} else {
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, hookrpc.SocketEnv+"=") })
	}
	out, err := cmd.Output()
	if err != nil {
		b.Fatal(err)
	}
	return string(out)
}

// BenchmarkHookExecBaseline is the floor for BenchmarkHookCall: starting
// `relay hook Stop` with no wrapper, which exits at once.
func BenchmarkHookExecBaseline(b *testing.B) {
	relay := relayBuilt(b)
	for b.Loop() {
		if out := runHookProcess(b, relay, ""); out != "" {
			b.Fatalf("printed %q without a wrapper", out)
		}
	}
}

// BenchmarkHookCall is one hook round trip as Claude Code sees it, less
// its shell: `relay hook Stop` starts, reads the payload, asks the
// wrapper's hook server, prints the StopBlock answer and exits.
func BenchmarkHookCall(b *testing.B) {
	relay := relayBuilt(b)
	s, err := hookrpc.Listen(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	answer := claude.StopBlock("[relay] Message from agent Alice: run the tests")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Serve(ctx, func(ctx context.Context, req hookrpc.Request) hookrpc.Response {
			return hookrpc.Response{Stdout: answer}
		})
	}()
	defer func() { cancel(); <-done }()
	for b.Loop() {
		if out := runHookProcess(b, relay, s.Path()); out != answer {
			b.Fatalf("printed %q, want %q", out, answer)
		}
	}
}

// TestRelayHookNoWrapper runs the relay binary as Claude Code would, with
// no wrapper behind it (no variable, or a socket that is gone): it prints
// nothing and exits 0 at once.
func TestRelayHookNoWrapper(t *testing.T) {
	relay := relayBuilt(t)
	for _, socket := range []string{"", filepath.Join(t.TempDir(), "gone.sock")} {
		cmd := exec.Command(relay, "hook", "Stop")
		cmd.Stdin = strings.NewReader(stopPayload)
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, hookrpc.SocketEnv+"=") })
		if socket != "" {
			cmd.Env = append(cmd.Env, hookrpc.SocketEnv+"="+socket)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil || stdout.Len() != 0 || stderr.Len() != 0 {
			t.Errorf("socket %q: %v, stdout %q, stderr %q; want exit 0 and nothing", socket, err, stdout.String(), stderr.String())
		}
		if d > time.Second {
			t.Errorf("socket %q: relay hook took %v without a wrapper", socket, d)
		}
		t.Logf("socket %q: relay hook Stop exited in %v", socket, d.Round(time.Millisecond))
	}
}
