package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/hookrpc"
)

func TestClaudeSettings(t *testing.T) {
	t.Parallel()
	// A path with a space, a quote and shell syntax: the hook must still
	// run exactly this program with `hook EVENT`.
	dir := filepath.Join(t.TempDir(), `it's $(here) "x"`)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "relay")
	out := filepath.Join(t.TempDir(), "args")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nprintf '%s|' \"$@\" > '"+out+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	js, err := Settings(bin)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatalf("settings are not JSON: %v\n%s", err, js)
	}
	var events []string
	for ev, groups := range s.Hooks {
		events = append(events, ev)
		if len(groups) != 1 || len(groups[0].Hooks) != 1 || groups[0].Matcher != nil {
			t.Fatalf("%s: want one group with one hook and no matcher: %s", ev, js)
		}
		h := groups[0].Hooks[0]
		// Claude Code's limit leaves relay's hook 20 s to start (it took
		// 7.7 s under load) before its own limit counts.
		if min := hookrpc.Limit(ev) + 20*time.Second; h.Type != "command" || time.Duration(h.Timeout)*time.Second < min {
			t.Errorf("%s: type %q timeout %d s, want at least %s", ev, h.Type, h.Timeout, min)
		}
		if err := exec.Command("sh", "-c", h.Command).Run(); err != nil {
			t.Fatalf("%s: sh -c %s: %v", ev, h.Command, err)
		}
		got, _ := os.ReadFile(out)
		if want := "hook|" + ev + "|"; string(got) != want {
			t.Errorf("%s: the shell ran the hook with %q, want %q", ev, got, want)
		}
	}
	slices.Sort(events)
	want := slices.Sorted(slices.Values(HookEvents()))
	if !slices.Equal(events, want) {
		t.Errorf("events %v, want %v", events, want)
	}
	if _, err := Settings(""); err == nil {
		t.Error("an empty path was accepted")
	}
	if _, err := Settings("/bin/re\nlay"); err == nil {
		t.Error("a path with a line break was accepted")
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "/usr/local/bin/relay", "a b", "it's", `"$HOME"`, "`x`", "a\\b", "-n", "~/x", "*"} {
		got, err := exec.Command("sh", "-c", "printf %s "+ShellQuote(s)).Output()
		if err != nil || string(got) != s {
			t.Errorf("ShellQuote(%q) = %s: the shell read %q (%v)", s, ShellQuote(s), got, err)
		}
	}
}

func TestParseClaudeHook(t *testing.T) {
	t.Parallel()
	// A Stop payload as Claude Code 2.1.328 sent it.
	stop := `{"session_id":"9d4f","transcript_path":"/t/x.jsonl","cwd":"/w","prompt_id":"dfeb","permission_mode":"auto",` +
		`"effort":{"level":"medium"},"hook_event_name":"Stop","stop_hook_active":true,` +
		`"last_assistant_message":"\\@relay:Nobody\n` + "```\\n@relay:Example\\n```" + `","background_tasks":[],"session_crons":[]}`
	h, err := ParseHook([]byte(stop))
	if err != nil {
		t.Fatal(err)
	}
	want := Hook{SessionID: "9d4f", TranscriptPath: "/t/x.jsonl", Cwd: "/w", HookEventName: "Stop", PermissionMode: "auto",
		PromptID: "dfeb", LastAssistantMessage: "\\@relay:Nobody\n```\n@relay:Example\n```", StopHookActive: true}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("got %+v\nwant %+v", h, want)
	}
	for _, bad := range []string{``, `[]`, `{"session_id":"x"}`, `{"hook_event_name":`} {
		if _, err := ParseHook([]byte(bad)); err == nil || !strings.Contains(err.Error(), "Claude Code hook payload") {
			t.Errorf("ParseHook(%q) error = %v", bad, err)
		}
	}
}

func TestHookAnswers(t *testing.T) {
	t.Parallel()
	if got, want := StopBlock(`run "the" tests`), `{"decision":"block","reason":"run \"the\" tests"}`; got != want {
		t.Errorf("StopBlock = %s, want %s", got, want)
	}
	got := AdditionalContext("PostToolUse", "[relay] urgent <b>")
	want := `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"[relay] urgent \u003cb\u003e"}}`
	if got != want {
		t.Errorf("AdditionalContext = %s, want %s", got, want)
	}
	var v map[string]map[string]string
	if err := json.Unmarshal([]byte(got), &v); err != nil || v["hookSpecificOutput"]["additionalContext"] != "[relay] urgent <b>" {
		t.Errorf("AdditionalContext does not round-trip: %v %v", v, err)
	}
}

// transcript is the real transcript of a Claude Code 2.1.328 session: the
// prompt "say hello" (line 5), a text and a Bash tool call (21, 22), its
// result (27), the final text (30), a Stop hook's block reason (35) and
// the text after it (40).
func transcript(t testing.TB) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "claude-2.1.328-turns.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	return lines[:len(lines)-1]
}

// cat joins runs of transcript lines.
func cat(runs ...[][]byte) []byte {
	var b []byte
	for _, r := range runs {
		b = append(b, bytes.Join(r, nil)...)
	}
	return b
}

func TestTurnTexts(t *testing.T) {
	t.Parallel()
	lines := transcript(t)
	first := "Checking first.\n\n@relay:Bob before the tool"
	tests := []struct {
		name string
		body []byte
		want []string
	}{
		{"whole session: only what came after the block", bytes.Join(lines, nil), []string{"After the block."}},
		{"at the first Stop: text before the tool and final text", bytes.Join(lines[:34], nil), []string{first, "All good after the tool."}},
		{"final text not written yet", bytes.Join(lines[:29], nil), []string{first}},
		{"during the tool call", bytes.Join(lines[:22], nil), []string{first}},
		{"after the prompt", bytes.Join(lines[:5], nil), nil},
		{"before any prompt", bytes.Join(lines[:4], nil), nil},
		{"empty", nil, nil},
		{"partial last line is skipped", append(bytes.Join(lines[:29], nil), lines[29][:40]...), []string{first}},
		{"partial final record kept out", append(bytes.Join(lines[:34], nil), lines[34][:len(lines[34])-1]...),
			[]string{first, "All good after the tool."}},
		// Claude Code may write a turn's last message after the Stop
		// hook's block reason that follows it.
		{"last message written after the block reason", cat(lines[:29], lines[34:35], lines[29:30]), nil},
		{"and then the text after the block", cat(lines[:29], lines[34:35], lines[29:30], lines[35:]), []string{"After the block."}},
		{"unknown record types are skipped", append(bytes.Join(lines[:30], nil),
			[]byte(`{"type":"assistant-v9","uuid":"v9","message":{"content":"x"}}`+"\n"+`{"type":"mystery"}`+"\n")...),
			[]string{first, "All good after the tool."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl")
			if err := os.WriteFile(path, tc.body, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := TurnTexts(path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("TurnTexts = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTurnTextsErrors(t *testing.T) {
	t.Parallel()
	if _, err := TurnTexts(filepath.Join(t.TempDir(), "none.jsonl")); err == nil || !strings.Contains(err.Error(), "transcript") {
		t.Errorf("missing file: %v", err)
	}
	lines := transcript(t)
	bad := append(bytes.Join(lines[:30], nil), []byte("{\"type\":\"assistant\",\"uuid\":\"u\",\"message\":\n")...)
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := TurnTexts(path); err == nil || !strings.Contains(err.Error(), "line 1 from the end") {
		t.Errorf("malformed line: %v", err)
	}
}

// A turn that starts far before the end of a long transcript is found by
// widening the window read from the end.
func TestTurnTextsLong(t *testing.T) {
	t.Parallel()
	lines := transcript(t)
	var b bytes.Buffer
	b.Write(bytes.Join(lines[:22], nil))
	pad := `{"type":"attachment","attachment":{"type":"x","text":"` + strings.Repeat("p", 100<<10) + `"}}` + "\n"
	for b.Len() < 3*transcriptWindow {
		b.WriteString(pad)
	}
	b.Write(bytes.Join(lines[22:30], nil))
	path := filepath.Join(t.TempDir(), "long.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := TurnTexts(path)
	want := []string{"Checking first.\n\n@relay:Bob before the tool", "All good after the tool."}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("TurnTexts = %q, %v; want %q", got, err, want)
	}
}

func TestStopTexts(t *testing.T) {
	t.Parallel()
	lines := transcript(t)
	path := filepath.Join(t.TempDir(), "t.jsonl")
	first := "Checking first.\n\n@relay:Bob before the tool"
	for _, tc := range []struct {
		name  string
		lines int
		want  []string
	}{
		{"final message not written yet", 29, []string{first, "All good after the tool."}},
		{"final message already written", 30, []string{first, "All good after the tool."}},
	} {
		if err := os.WriteFile(path, bytes.Join(lines[:tc.lines], nil), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := StopTexts(Hook{HookEventName: "Stop", TranscriptPath: path, LastAssistantMessage: "All good after the tool."})
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: StopTexts = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	got, err := StopTexts(Hook{HookEventName: "Stop", TranscriptPath: filepath.Join(t.TempDir(), "not-yet.jsonl"), LastAssistantMessage: "last"})
	if err != nil || !slices.Equal(got, []string{"last"}) {
		t.Errorf("transcript not written yet: %q, %v; want the last message alone, no error", got, err)
	}
	dir := t.TempDir() // a folder where the file should be: unreadable
	got, err = StopTexts(Hook{HookEventName: "Stop", TranscriptPath: dir, LastAssistantMessage: "last"})
	if err == nil || !slices.Equal(got, []string{"last"}) {
		t.Errorf("unreadable transcript: %q, %v; want the last message and an error", got, err)
	}
}

// FuzzTurnTexts feeds arbitrary transcript bytes to the scanner: it never
// panics, and whatever it returns came from assistant records.
func FuzzTurnTexts(f *testing.F) {
	lines := transcript(f)
	for _, n := range []int{5, 22, 30, 35, 42} {
		f.Add(bytes.Join(lines[max(n-3, 0):n], nil), false)
	}
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result"}]}}`+"\n"), true)
	f.Add([]byte(`{"type":"assistant","message":{"content":"plain"}}`+"\n"), false)
	f.Add([]byte("\n\n{\"type\":\"user\"\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, cut bool) {
		texts, _, err := turnTexts(data, cut)
		if err != nil && texts != nil {
			t.Fatalf("texts %q with error %v", texts, err)
		}
		if len(texts) > 0 && !bytes.Contains(data, []byte(`"assistant"`)) {
			t.Fatalf("texts %q from input without assistant records", texts)
		}
	})
}

// FuzzShellQuote checks that the shell reads back exactly the quoted word.
func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"/usr/bin/relay", "it's", "a b", `$(id)`, "'", "''", "\\", "\t", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) {
			return
		}
		got, err := exec.Command("sh", "-c", "printf %s "+ShellQuote(s)).Output()
		if err != nil || string(got) != s {
			t.Fatalf("ShellQuote(%q) = %s: the shell read %q (%v)", s, ShellQuote(s), got, err)
		}
	})
}

// TestTranscriptReader replays the fixture's session as Claude Code wrote
// it, a few records at a time and with its late writes: every assistant
// text comes out exactly once.
func TestTranscriptReader(t *testing.T) {
	t.Parallel()
	lines := transcript(t)
	path := filepath.Join(t.TempDir(), "t.jsonl")
	write := func(b []byte) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	r, err := NewTranscriptReader(path) // SessionStart: no file yet
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string, got []string, err error, want ...string) {
		t.Helper()
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %q, %v; want %q", step, got, err, want)
		}
	}
	got, err := r.Next()
	check("before the file exists", got, err)
	write(cat(lines[:22]))
	got, err = r.Next()
	check("PostToolUse", got, err, "Checking first.\n\n@relay:Bob before the tool")
	write(cat(lines[22:29]))
	got, err = r.Stop(Hook{HookEventName: "Stop", LastAssistantMessage: "All good after the tool."})
	check("first Stop, last message not written", got, err, "All good after the tool.")
	// The block's reason, then the late last message, then half a line.
	write(cat(lines[34:35], lines[29:30], lines[35:39], [][]byte{lines[39][:50]}))
	got, err = r.Next()
	check("late last message", got, err)
	write(cat([][]byte{lines[39][50:]}, lines[40:]))
	got, err = r.Stop(Hook{HookEventName: "Stop", StopHookActive: true, LastAssistantMessage: "After the block."})
	check("second Stop, last message written", got, err, "After the block.")
	got, err = r.Next()
	check("nothing new", got, err)

	// A reader opened on an existing transcript (a resumed session) starts
	// at its end; a malformed line is reported and skipped.
	r2, err := NewTranscriptReader(path)
	if err != nil {
		t.Fatal(err)
	}
	write([]byte(`{"type":"assistant","message":` + "\n"))
	write(lines[20])
	got, err = r2.Next()
	if !slices.Equal(got, []string{"Checking first.\n\n@relay:Bob before the tool"}) || err == nil || !strings.Contains(err.Error(), "line at byte") {
		t.Errorf("resumed reader with a bad line: %q, %v", got, err)
	}
}

// FuzzTranscriptReader writes arbitrary bytes as a transcript in two
// pieces: the reader never panics, and reading in pieces returns the same
// texts as reading at once.
func FuzzTranscriptReader(f *testing.F) {
	lines := transcript(f)
	f.Add(cat(lines[18:23]), 30)
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"a"}]}}`+"\n"+`{"type":"assistant"`), 5)
	f.Add([]byte("\n\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		if cut < 0 || cut > len(data) {
			return
		}
		dir := t.TempDir()
		once, pieces := filepath.Join(dir, "once"), filepath.Join(dir, "pieces")
		if os.WriteFile(once, data, 0o600) != nil || os.WriteFile(pieces, data[:cut], 0o600) != nil {
			t.Skip()
		}
		r1 := &TranscriptReader{path: once}
		want, _ := r1.Next()
		r2 := &TranscriptReader{path: pieces}
		got, _ := r2.Next()
		if os.WriteFile(pieces, data, 0o600) != nil {
			t.Skip()
		}
		more, _ := r2.Next()
		got = append(got, more...)
		if !slices.Equal(got, want) {
			t.Fatalf("in pieces %q, at once %q", got, want)
		}
	})
}

// A Stop hook that hands a message to Claude Code instead of typing it.
func ExampleStopBlock() {
	fmt.Println(StopBlock("[relay] Message from agent Alice: run the tests"))
	// Output: {"decision":"block","reason":"[relay] Message from agent Alice: run the tests"}
}

// An urgent message riding on a tool's result.
func ExampleAdditionalContext() {
	fmt.Println(AdditionalContext("PostToolUse", "[relay] Urgent message from agent Alice: stop the deploy"))
	// Output: {"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"[relay] Urgent message from agent Alice: stop the deploy"}}
}

// The settings that make Claude Code run `relay hook EVENT`: a path with
// a space is quoted for the shell that runs hook commands.
func ExampleSettings() {
	js, _ := Settings("/opt/my tools/relay")
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
	}
	json.Unmarshal([]byte(js), &s)
	fmt.Println(s.Hooks["Stop"][0].Hooks[0].Command)
	// Output: '/opt/my tools/relay' hook Stop
}

// TestTranscriptReaderAwaitsToolCalls: Claude Code writes its transcript in
// the background; at a turn's Stop the record of a tool call that already
// ran (PostToolUse), and the text before it, may still be missing. Stop
// waits for them, so the turn's texts come in the order the model wrote
// them, each once.
func TestTranscriptReaderAwaitsToolCalls(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(`{"type":"user","message":{"content":"use a tool"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := NewTranscriptReader(path)
	if err != nil {
		t.Fatal(err)
	}
	r.Await("toolu_1")
	got := make(chan []string, 1)
	go func() {
		texts, err := r.Stop(Hook{HookEventName: "Stop", TranscriptPath: path, LastAssistantMessage: "after the tool"})
		if err != nil {
			t.Error(err)
		}
		got <- texts
	}()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(`{"type":"assistant","message":{"content":[{"type":"text","text":"before the tool"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if texts := <-got; !slices.Equal(texts, []string{"before the tool", "after the tool"}) {
		t.Errorf("Stop = %q, want the text before the tool call first", texts)
	}
	if _, err := f.WriteString(`{"type":"assistant","message":{"content":[{"type":"text","text":"after the tool"}]}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if texts, err := r.Next(); err != nil || len(texts) != 0 {
		t.Errorf("Next after the last message was written = %q, %v; want nothing (Stop returned it)", texts, err)
	}
}
