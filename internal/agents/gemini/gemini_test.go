package gemini_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/agents/gemini"
)

// growFile appends data to path.
func growFile(t testing.TB, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
}

// TestGeminiTranscriptFixture: the transcript recorded from the real
// Gemini CLI, written in pieces of every size (cutting lines anywhere) and
// read after each piece, yields each reply once, in order, word for word;
// the rewritten record of the reply before a tool call counts once.
func TestGeminiTranscriptFixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", geminiFixture))
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []int{1, 7, 64, 333, len(data)} {
		t.Run(fmt.Sprint(step), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "session.jsonl")
			r, err := gemini.NewTranscriptReader(path)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i := 0; i < len(data); i += step {
				growFile(t, path, data[i:min(i+step, len(data))])
				texts, err := r.Next()
				if err != nil {
					t.Fatalf("after %d bytes: %v", i+step, err)
				}
				got = append(got, texts...)
			}
			texts, err := r.Stop()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, texts...)
			if want := geminiTexts(); !slices.Equal(got, want) {
				t.Errorf("got\n%q\nwant\n%q", got, want)
			}
		})
	}
}

// TestGeminiTranscriptSettles: a reply is returned by Next only once a
// later message record follows it (Gemini CLI may rewrite it until then),
// and by Stop at the end of the turn.
func TestGeminiTranscriptSettles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.jsonl")
	r, err := gemini.NewTranscriptReader(path)
	if err != nil {
		t.Fatal(err)
	}
	step := func(lines string, stop bool, want ...string) {
		t.Helper()
		growFile(t, path, []byte(lines))
		read := r.Next
		if stop {
			read = r.Stop
		}
		got, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("after %q: got %q, want %q", lines, got, want)
		}
	}
	step(`{"sessionId":"s","kind":"main"}`+"\n"+`{"id":"u1","type":"user","content":[{"text":"hi"}]}`+"\n", false)
	step(`{"id":"g1","type":"gemini","content":"Calling a tool."}`+"\n", false)
	step(`{"$set":{"lastUpdated":"x"}}`+"\n"+`{"id":"g1","type":"gemini","content":"Calling a tool.","toolCalls":[{}]}`+"\n", false)
	step(`{"id":"u2","type":"user","content":[{"functionResponse":{}}]}`+"\n", false, "Calling a tool.")
	step(`{"id":"g2","type":"gemini","content":"Done."}`+"\n", false)
	step("", true, "Done.")
	step("", true)
	// A rewrite after Stop that extends the reply gives the added part;
	// the same text again gives nothing.
	step(`{"id":"g2","type":"gemini","content":"Done.\n\n@relay:Bob late line"}`+"\n", false, "@relay:Bob late line")
	step(`{"id":"g2","type":"gemini","content":"Done.\n\n@relay:Bob late line"}`+"\n", true)
}

// TestGeminiTranscriptProblems: a malformed line, a rewrite that changes a
// returned reply, and a history replaced with $set are reported or skipped
// without losing the replies around them.
func TestGeminiTranscriptProblems(t *testing.T) {
	cases := []struct {
		name    string
		lines   string
		want    []string
		wantErr string
		is      error
	}{
		{
			name:    "malformed line",
			lines:   `{"id":"g1","type":"gemini","content":"One."}` + "\n" + `{"id":` + "\n" + `{"id":"g2","type":"gemini","content":"Two."}` + "\n",
			want:    []string{"One.", "Two."},
			wantErr: "line at byte 45",
		},
		{
			name:    "rewrite that changes a returned reply",
			lines:   `{"id":"g1","type":"gemini","content":"One."}` + "\n" + `{"id":"u","type":"user","content":[]}` + "\n" + `{"id":"g1","type":"gemini","content":"Other."}` + "\n",
			want:    []string{"One."},
			wantErr: "reply g1",
			is:      gemini.ErrRewrite,
		},
		{
			name:  "history set at once is old",
			lines: `{"$set":{"messages":[{"id":"g0","type":"gemini","content":"Old."}]}}` + "\n" + `{"id":"g0","type":"gemini","content":"Old."}` + "\n" + `{"id":"g1","type":"gemini","content":"New."}` + "\n",
			want:  []string{"New."},
		},
		{
			name:  "a reply that is only a tool call",
			lines: `{"id":"g1","type":"gemini","content":"","toolCalls":[{}]}` + "\n" + `{"id":"g2","type":"gemini","content":[{"text":"From "},{"text":"parts."}]}` + "\n",
			want:  []string{"From parts."},
		},
		{
			name:  "unterminated last line waits",
			lines: `{"id":"g1","type":"gemini","content":"One."}` + "\n" + `{"id":"g2","type":"gemini","content":"Tw`,
			want:  []string{"One."},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "session.jsonl")
			growFile(t, path, []byte(c.lines))
			r, err := gemini.NewTranscriptReader(filepath.Join(filepath.Dir(path), "other.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := r.Stop(); got != nil || err != nil {
				t.Fatalf("a transcript not written yet: %q, %v", got, err)
			}
			if err := os.Rename(path, filepath.Join(filepath.Dir(path), "other.jsonl")); err != nil {
				t.Fatal(err)
			}
			got, err := r.Stop()
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error %v, want one containing %q", err, c.wantErr)
			case c.is != nil && !errors.Is(err, c.is):
				t.Errorf("error %v is not %v", err, c.is)
			}
		})
	}
}

// TestGeminiTranscriptResume: a reader made on an existing transcript
// returns only what is written after.
func TestGeminiTranscriptResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.jsonl")
	growFile(t, path, []byte(`{"id":"g1","type":"gemini","content":"Old."}`+"\n"))
	r, err := gemini.NewTranscriptReader(path)
	if err != nil {
		t.Fatal(err)
	}
	growFile(t, path, []byte(`{"id":"u","type":"user","content":[]}`+"\n"+`{"id":"g2","type":"gemini","content":"New."}`+"\n"))
	if got, err := r.Stop(); err != nil || !slices.Equal(got, []string{"New."}) {
		t.Errorf("got %q, %v; want only New.", got, err)
	}
}

// TestFindGeminiTranscript: the transcript is found from the session id
// whatever the project folder's name; a missing one is fs.ErrNotExist.
func TestFindGeminiTranscript(t *testing.T) {
	home := t.TempDir()
	const id = "5e551011-0000-4000-8000-000000000001"
	if _, err := gemini.FindTranscript(home, id); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no transcript: %v, want fs.ErrNotExist", err)
	}
	dir := filepath.Join(home, ".gemini", "tmp", "myproject", "chats")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "session-2026-12-02T16-41-5e551011.jsonl")
	growFile(t, want, nil)
	growFile(t, filepath.Join(dir, "session-2026-12-02T16-41-0ther000.jsonl"), nil)
	if got, err := gemini.FindTranscript(home, id); err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	if _, err := gemini.FindTranscript(home, "*"); err == nil {
		t.Error("a glob as session id was accepted")
	}
}

// FuzzGeminiTranscript: whatever the file holds, the reader neither
// panics nor returns an empty reply, and a second Stop returns nothing.
func FuzzGeminiTranscript(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", geminiFixture)); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"id":"g","type":"gemini","content":"x"}` + "\n" + `{"$set":{"messages":[{"id":"g","type":"gemini"}]}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		r, err := gemini.NewTranscriptReader(path)
		if err != nil {
			t.Fatal(err)
		}
		growFile(t, path, data)
		texts, _ := r.Next()
		more, _ := r.Stop()
		for _, s := range append(texts, more...) {
			if strings.TrimSpace(s) == "" {
				t.Errorf("empty reply returned")
			}
		}
		if again, _ := r.Stop(); len(again) != 0 {
			t.Errorf("a second Stop returned %q", again)
		}
	})
}

// ExampleTranscriptReader reads the replies of a Gemini CLI session:
// Next while it works, Stop when it is idle again.
func ExampleTranscriptReader() {
	dir, _ := os.MkdirTemp("", "gemini-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "session-2026-12-02T16-41-5e551011.jsonl")
	r, _ := gemini.NewTranscriptReader(path)
	os.WriteFile(path, []byte(`{"id":"u1","type":"user","content":[{"text":"ask Bob"}]}`+"\n"+
		`{"id":"g1","type":"gemini","content":"Asking.\n\n@relay:Bob please run the tests"}`+"\n"), 0o600)
	texts, _ := r.Next() // the reply may still be rewritten
	fmt.Println(len(texts))
	texts, _ = r.Stop() // the turn ended
	fmt.Printf("%q\n", texts)
	// Output:
	// 0
	// ["Asking.\n\n@relay:Bob please run the tests"]
}

// TestGeminiPrompts: the recorded transcript's user messages are the
// prompts, tool results left out.
func TestGeminiPrompts(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", geminiFixture))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "session.jsonl")
	growFile(t, path, data)
	r := gemini.NewTranscriptReaderAt(path, 0)
	replies, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if want := geminiTexts(); !slices.Equal(replies, want) {
		t.Errorf("replies from byte 0:\n%q\nwant\n%q", replies, want)
	}
	if got, want := r.Prompts(), []string{"first prompt", "second prompt", "third prompt"}; !slices.Equal(got, want) {
		t.Errorf("prompts %q, want %q", got, want)
	}
	if got := r.Prompts(); got != nil {
		t.Errorf("prompts taken twice: %q", got)
	}
}

func TestGeminiSession(t *testing.T) {
	newID := func() string { return "11111111-2222-4333-8444-555555555555" }
	for _, tc := range []struct {
		name    string
		args    []string
		id      string
		add     []string
		refused bool
	}{
		{"new", []string{"-m", "gemini-2.5-flash"}, newID(), []string{"--session-id", newID()}, false},
		{"own id", []string{"--session-id", "abcdefgh-1"}, "abcdefgh-1", nil, false},
		{"own id with =", []string{"--session-id=abcdefgh-2"}, "abcdefgh-2", nil, false},
		{"resume", []string{"--resume", "latest"}, "", nil, true},
		{"short resume", []string{"-r"}, "", nil, true},
		{"headless", []string{"-p", "hi"}, "", nil, true},
		{"no value", []string{"--session-id"}, "", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, add, err := gemini.Session(tc.args, newID)
			if tc.refused {
				if !errors.Is(err, gemini.ErrNoSession) {
					t.Errorf("err = %v, want ErrNoSession", err)
				}
				return
			}
			if err != nil || id != tc.id || !slices.Equal(add, tc.add) {
				t.Errorf("Session = %q, %q, %v; want %q, %q", id, add, err, tc.id, tc.add)
			}
		})
	}
}
