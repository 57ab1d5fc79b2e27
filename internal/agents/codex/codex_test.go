package codex_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents/codex"
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

// TestCodexRolloutFixture: the rollout recorded from the real Codex,
// written in pieces of every size (cutting lines anywhere) and read after
// each piece, yields each reply once, in order, word for word, and each
// prompt.
func TestCodexRolloutFixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", codexFixture))
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []int{1, 7, 64, 333, len(data)} {
		t.Run(fmt.Sprint(step), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rollout.jsonl")
			r := codex.NewRolloutReader(path, 0)
			var got codex.Reading
			for i := 0; i < len(data); i += step {
				growFile(t, path, data[i:min(i+step, len(data))])
				rd, err := r.Next()
				if err != nil {
					t.Fatalf("after %d bytes: %v", i+step, err)
				}
				got.Replies = append(got.Replies, rd.Replies...)
				got.Prompts = append(got.Prompts, rd.Prompts...)
			}
			if want := codexTexts(); !slices.Equal(got.Replies, want) {
				t.Errorf("replies\n%q\nwant\n%q", got.Replies, want)
			}
			var typed []string
			for _, p := range got.Prompts {
				if !strings.HasPrefix(p, "<environment_context>") {
					typed = append(typed, p)
				}
			}
			if !slices.Equal(typed, codexPrompts) {
				t.Errorf("prompts %q, want %q", typed, codexPrompts)
			}
		})
	}
}

// TestCodexRolloutResumed: a reader that starts at a resumed session's end
// returns only what is written after, and a message written again with
// the same id is returned once.
func TestCodexRolloutResumed(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", codexFixture))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	growFile(t, path, data)
	r := codex.NewRolloutReader(path, int64(len(data)))
	if rd, err := r.Next(); err != nil || len(rd.Replies)+len(rd.Prompts) != 0 {
		t.Fatalf("at the end: %+v, %v; want nothing", rd, err)
	}
	line := `{"type":"response_item","payload":{"type":"message","id":"msg_new","role":"assistant","content":[{"type":"output_text","text":"New reply."}]}}` + "\n"
	growFile(t, path, []byte(line+line))
	rd, err := r.Next()
	if err != nil || !slices.Equal(rd.Replies, []string{"New reply."}) {
		t.Errorf("after a new reply written twice: %q, %v; want it once", rd.Replies, err)
	}
}

// TestCodexRolloutMalformed: a broken line is reported with its offset and
// the replies around it are still returned.
func TestCodexRolloutMalformed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	reply := func(id, text string) string {
		return `{"type":"response_item","payload":{"type":"message","id":"` + id + `","role":"assistant","content":[{"type":"output_text","text":"` + text + `"}]}}` + "\n"
	}
	bad := `{"type":"response_item","payload":` + "\n"
	growFile(t, path, []byte(reply("a", "one")+bad+reply("b", "two")))
	rd, err := codex.NewRolloutReader(path, 0).Next()
	if !slices.Equal(rd.Replies, []string{"one", "two"}) {
		t.Errorf("replies %q, want one and two", rd.Replies)
	}
	at := fmt.Sprintf("line at byte %d", len(reply("a", "one")))
	if err == nil || !strings.Contains(err.Error(), at) {
		t.Errorf("error %v, want one naming the %s", err, at)
	}
}

func TestCodexThread(t *testing.T) {
	home := "/home/u/.codex"
	id := "01a2381d-a7f3-7c62-b365-bc4e407be819"
	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"lock", []string{"/home/u/.codex/state_5.sqlite", home + "/thread-writer-locks/" + id + ".lock"}, id},
		{"rollout", []string{home + "/sessions/2026/12/02/rollout-2026-12-02T18-56-37-" + id + ".jsonl"}, id},
		{"coordination lock", []string{home + "/thread-writer-locks/.coordination.lock"}, ""},
		{"another home", []string{"/other/.codex/thread-writer-locks/" + id + ".lock"}, ""},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := codex.Thread(home, tc.files); got != tc.want {
				t.Errorf("Thread = %q, want %q", got, tc.want)
			}
		})
	}
}

// writeRollout writes a rollout with a session_meta record for cwd.
func writeRollout(t *testing.T, home string, day time.Time, id, cwd string, started time.Time) string {
	t.Helper()
	dir := filepath.Join(home, "sessions", day.Format("2006"), day.Format("01"), day.Format("02"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rollout-"+started.UTC().Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
	meta := fmt.Sprintf(`{"type":"session_meta","payload":{"id":%q,"timestamp":%q,"cwd":%q}}`+"\n", id, started.UTC().Format(time.RFC3339Nano), cwd)
	if err := os.WriteFile(path, []byte(meta), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFindCodexRollout(t *testing.T) {
	home := t.TempDir()
	now := time.Now()
	id := "01a2381d-a7f3-7c62-b365-bc4e407be819"
	if _, err := codex.FindRollout(home, id); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("before the first prompt: %v, want fs.ErrNotExist", err)
	}
	if _, err := codex.FindRollout(home, "../x"); err == nil {
		t.Error("a bad thread id was accepted")
	}
	want := writeRollout(t, home, now, id, "/work", now)
	if got, err := codex.FindRollout(home, id); err != nil || got != want {
		t.Errorf("FindRollout = %q, %v; want %q", got, err, want)
	}
}

func TestFindNewCodexRollout(t *testing.T) {
	home := t.TempDir()
	since := time.Now()
	if _, err := codex.FindNewRollout(home, "/work", since); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no sessions: %v, want fs.ErrNotExist", err)
	}
	writeRollout(t, home, since, "00000000-0000-0000-0000-000000000001", "/work", since.Add(-time.Hour)) // older session
	writeRollout(t, home, since, "00000000-0000-0000-0000-000000000002", "/elsewhere", since)            // another folder
	mine := writeRollout(t, home, since, "00000000-0000-0000-0000-000000000003", "/work", since.Add(time.Second))
	if got, err := codex.FindNewRollout(home, "/work", since); err != nil || got != mine {
		t.Errorf("FindNewRollout = %q, %v; want %q", got, err, mine)
	}
	writeRollout(t, home, since, "00000000-0000-0000-0000-000000000004", "/work", since.Add(2*time.Second))
	if _, err := codex.FindNewRollout(home, "/work", since); !errors.Is(err, codex.ErrAmbiguous) {
		t.Errorf("two new sessions in one folder: %v, want ErrAmbiguous", err)
	}
}

func TestCodexHome(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h", "CODEX_HOME=/c"}, "/c"},
		{[]string{"HOME=/h"}, "/h/.codex"},
		{[]string{"HOME=/h", "CODEX_HOME="}, "/h/.codex"},
	} {
		if got := codex.Home(tc.env); got != tc.want {
			t.Errorf("Home(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

// FuzzCodexRollout: any bytes, in two writes, never panic the reader, and a
// reply line appended after them is read (the reader never gets stuck).
func FuzzCodexRollout(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", codexFixture))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:min(len(data), 3000)], 100)
	f.Add([]byte(`{"type":"response_item","payload":{"type":"message","content":7}}`+"\n"), 5)
	f.Add([]byte("\xff\xfe\n{}\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		path := filepath.Join(t.TempDir(), "rollout.jsonl")
		r := codex.NewRolloutReader(path, 0)
		cut = max(0, min(cut, len(data)))
		growFile(t, path, data[:cut])
		_, _ = r.Next()
		growFile(t, path, data[cut:])
		_, _ = r.Next()
		// End whatever line is open, then a reply of a fresh id.
		growFile(t, path, []byte("\n"+`{"type":"response_item","payload":{"type":"message","id":"zz-fuzz-end","role":"assistant","content":[{"type":"output_text","text":"the end"}]}}`+"\n"))
		rd, _ := r.Next()
		if !slices.Contains(rd.Replies, "the end") {
			t.Errorf("a reply after %q was not read: %q", data, rd.Replies)
		}
	})
}
