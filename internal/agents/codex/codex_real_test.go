package codex_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents/codex"
	"github.com/relayhq/relay/internal/procfs"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

var recordCodex = flag.Bool("record-codex", false, "write the real Codex's rollout file to testdata/"+codexFixture)

// codexFixture is the rollout file recorded from the real Codex by
// TestCodexRolloutRealCLI -record-codex.
const codexFixture = "codex-0.169.0-rollout.jsonl"

// codexReplies are the replies the mock model gives, in order: one short,
// one streamed in small pieces with markdown (an escape, a fence), one
// before a tool call and one after it.
func codexReplies() []mockmodel.Reply {
	return []mockmodel.Reply{
		{Text: "First answer."},
		{Text: "Second answer, streamed in small pieces.\n\n@relay:Bob please look at `main.go` and **tell me**.\n\n\\@relay:Bob escaped\n\n```\n@relay:Bob in a fence\n```\nDone.",
			Chunk: 7, ChunkDelay: 20 * time.Millisecond},
		{Text: "Let me run it.\n\n@relay:Carol before the tool",
			ToolUse: &mockmodel.ToolUse{Name: "exec_command", Input: map[string]any{"cmd": "true"}}},
		{Text: "After the tool.\n\n@relay:Dave after the tool"},
	}
}

func codexTexts() []string {
	var texts []string
	for _, r := range codexReplies() {
		texts = append(texts, r.Text)
	}
	return texts
}

var codexPrompts = []string{"first prompt", "second prompt", "third prompt"}

// TestCodexRolloutRealCLI: the real Codex, against a mock model, answers
// three prompts (one reply streamed in pieces, one followed by a tool call
// that it runs). Its thread is known from its open files at its first
// screen; the rollout file it writes at the first prompt, read while it
// works, gives each reply once, word for word, and each prompt.
func TestCodexRolloutRealCLI(t *testing.T) {
	m := mockmodel.NewResponses(mockmodel.Options{Script: mockmodel.Queue(codexReplies()...)})
	t.Cleanup(m.Close)
	cmd := agenttest.Codex(t, agenttest.CodexOptions{Model: m.URL})
	home := codex.Home(cmd.Env)
	term := agenttest.Start(t, cmd)
	if _, err := term.WaitReady(60*time.Second, agenttest.CodexReady); err != nil {
		t.Fatalf("Codex not ready: %v", err)
	}
	var thread string
	testutil.Eventually(t, func() error {
		files, err := procfs.OpenFiles(term.Pid())
		if err != nil {
			return err
		}
		if thread = codex.Thread(home, files); thread == "" {
			return fmt.Errorf("no thread among Codex's open files %q", files)
		}
		return nil
	})
	start := time.Now()
	var r *codex.RolloutReader
	var got codex.Reading
	poll := func() {
		if r == nil {
			path, err := codex.FindRollout(home, thread)
			if err != nil {
				return
			}
			r = codex.NewRolloutReader(path, 0)
		}
		rd, err := r.Next()
		if err != nil {
			t.Errorf("read rollout: %v", err)
		}
		got.Replies = append(got.Replies, rd.Replies...)
		got.Prompts = append(got.Prompts, rd.Prompts...)
	}
	for i, p := range codexPrompts {
		term.Paste(p)
		// Codex takes an Enter written with the paste as a newline.
		if _, err := term.WaitScreen(10*time.Second, func(screen string) bool { return strings.Contains(screen, p) }); err != nil {
			t.Fatalf("%q not in Codex's input box: %v", p, err)
		}
		term.Enter()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		_, err := m.WaitForRequest(ctx, p)
		cancel()
		if err != nil {
			t.Fatalf("the model never got %q: %v\n%s", p, err, agenttest.TmuxScreen(t, term.Raw(), 100, 30))
		}
		want := codexTexts()[:i+1]
		if i == 2 {
			want = codexTexts()
		}
		testutil.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
			poll()
			if len(got.Replies) < len(want) {
				return fmt.Errorf("after %q: replies read %q", p, got.Replies)
			}
			return nil
		})
	}
	poll()
	if want := codexTexts(); !slices.Equal(got.Replies, want) {
		t.Errorf("replies read:\n%q\nwant each once:\n%q", got.Replies, want)
	}
	for _, p := range codexPrompts {
		if !slices.Contains(got.Prompts, p) {
			t.Errorf("prompt %q not read; prompts: %q", p, got.Prompts)
		}
	}
	if found, err := codex.FindNewRollout(home, cmd.Dir, start.Add(-time.Minute)); err != nil || found != r.Path() {
		t.Errorf("FindNewRollout = %q, %v; want %q", found, err, r.Path())
	}
	if *recordCodex {
		data, err := os.ReadFile(r.Path())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", codexFixture), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
