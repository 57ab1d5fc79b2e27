package gemini_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents/gemini"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

var recordGemini = flag.Bool("record-gemini", false, "write the real Gemini CLI's chat transcript to testdata/"+geminiFixture)

// geminiFixture is the chat transcript recorded from the real Gemini CLI
// by TestGeminiTranscriptRealCLI -record-gemini.
const geminiFixture = "gemini-0.61.0-chat.jsonl"

// geminiReplies are the replies the mock model gives, in order: one short,
// one streamed in small pieces with markdown, one before a tool call (the
// record Gemini CLI rewrites with the call) and one after it.
func geminiReplies() []mockmodel.Reply {
	return []mockmodel.Reply{
		{Text: "First answer."},
		{Text: "Second answer, streamed in small pieces.\n\n@relay:Bob please look at `main.go` and **tell me**.\n\n```go\nfmt.Println(1)\n```\nDone.",
			Chunk: 7, ChunkDelay: 20 * time.Millisecond},
		{Text: "Let me run it.\n\n@relay:Carol before the tool",
			ToolUse: &mockmodel.ToolUse{Name: "run_shell_command", Input: map[string]any{"command": "true", "description": "nothing"}}},
		{Text: "After the tool.\n\n@relay:Dave after the tool"},
	}
}

func geminiTexts() []string {
	var texts []string
	for _, r := range geminiReplies() {
		texts = append(texts, r.Text)
	}
	return texts
}

// TestGeminiTranscriptRealCLI: the real Gemini CLI, against a mock model,
// answers three prompts (one reply streamed in pieces, one followed by a
// tool call that it runs); a TranscriptReader polled while it works,
// and stopped at each idle screen, returns each reply once, word for word.
func TestGeminiTranscriptRealCLI(t *testing.T) {
	m := mockmodel.NewGemini(mockmodel.Options{Script: mockmodel.Queue(geminiReplies()...)})
	t.Cleanup(m.Close)
	const sessionID = "5e551011-0000-4000-8000-000000000001"
	cmd := agenttest.Gemini(t, agenttest.GeminiOptions{Model: m.URL, ExtraArgs: []string{"--yolo", "--session-id", sessionID}})
	var home string
	for _, kv := range cmd.Env {
		if h, ok := strings.CutPrefix(kv, "GEMINI_CLI_HOME="); ok {
			home = h
		}
	}
	term := agenttest.Start(t, cmd)
	if _, err := term.WaitReady(60*time.Second, agenttest.GeminiReady); err != nil {
		t.Fatalf("Gemini CLI not ready: %v", err)
	}
	var path string
	testutil.Eventually(t, func() error {
		var err error
		path, err = gemini.FindTranscript(home, sessionID)
		return err
	})
	r, err := gemini.NewTranscriptReader(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	poll := func(stop bool) {
		var texts []string
		var err error
		if stop {
			texts, err = r.Stop()
		} else {
			texts, err = r.Next()
		}
		if err != nil {
			t.Errorf("read transcript: %v", err)
		}
		got = append(got, texts...)
	}
	for _, p := range []string{"first prompt", "second prompt", "third prompt"} {
		// Gemini CLI takes an Enter that its event loop reads together
		// with the paste as a newline (a loaded machine does that), so
		// the prompt is confirmed by the model and Enter pressed again
		// only if it never arrived.
		if _, err := term.SubmitConfirm(p, 300*time.Millisecond, 60*time.Second, func() bool { return m.Count(p) > 0 }); err != nil {
			t.Fatalf("the model never got %q: %v\n%s", p, err, agenttest.TmuxScreen(t, term.Raw(), 100, 30))
		}
		// Poll while it works, as a wrapper would at each screen change,
		// then stop at the idle screen.
		deadline := time.Now().Add(60 * time.Second)
		for {
			poll(false)
			scr, _ := agenttest.RenderScreen(term.Raw(), 100, 30)
			if agenttest.GeminiReady(scr) && len(m.Turns()) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Gemini CLI did not get idle after %q", p)
			}
			time.Sleep(50 * time.Millisecond)
		}
		testutil.Eventually(t, func() error {
			poll(true)
			if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), replyFor(p)) {
				return fmt.Errorf("the reply to %q not read yet; read so far: %q", p, got)
			}
			return nil
		})
	}
	poll(true)
	if want := geminiTexts(); !slices.Equal(got, want) {
		t.Errorf("replies read:\n%q\nwant each once:\n%q", got, want)
	}
	if *recordGemini {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", geminiFixture), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// replyFor is the start of the reply that closes the turn of prompt.
func replyFor(prompt string) string {
	switch prompt {
	case "first prompt":
		return "First answer."
	case "second prompt":
		return "Second answer"
	}
	return "After the tool."
}
