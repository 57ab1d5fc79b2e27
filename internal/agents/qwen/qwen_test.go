package qwen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChatReader reads a chat record Qwen Code 0.24.4 wrote against the
// mock model: the reply's exact markdown (fence and escape intact) once,
// the prompt once, and nothing of the system records.
func TestChatReader(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/qwen-0.24.4-chat.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	const id = "0b0e0b2c-1d2e-4f3a-8b4c-5d6e7f8a9b0c"
	dir := filepath.Join(home, ".qwen", "projects", "-work", "chats")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path, err := FindChat(home, id)
	if err == nil {
		t.Fatalf("found %s before it exists", path)
	}
	// Written in two steps, as Qwen Code appends: a cut mid-line waits.
	cut := len(src) - 40
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), src[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	if path, err = FindChat(home, id); err != nil {
		t.Fatal(err)
	}
	r := NewChatReaderAt(path, 0)
	replies, prompts, err := r.Read(false)
	if err != nil || len(replies) != 0 || len(prompts) != 1 || prompts[0] != "say hi" {
		t.Fatalf("first read: %q, %q, %v", replies, prompts, err)
	}
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	replies, prompts, err = r.Read(true)
	if err != nil || len(replies) != 1 || len(prompts) != 0 {
		t.Fatalf("second read: %q, %q, %v", replies, prompts, err)
	}
	if !strings.Contains(replies[0], "```\n@relay:Bob fenced\n```") || !strings.HasSuffix(replies[0], `\@relay:Bob escaped`) {
		t.Errorf("reply not exact: %q", replies[0])
	}
	if replies, prompts, err = r.Read(true); len(replies)+len(prompts) != 0 || err != nil {
		t.Errorf("third read: %q, %q, %v", replies, prompts, err)
	}
}

func TestExactSessionID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		add  bool
		err  bool
	}{
		{nil, true, false},
		{[]string{"--session-id", "0b0e0b2c-1d2e-4f3a-8b4c-5d6e7f8a9b0c"}, false, false},
		{[]string{"--resume"}, false, true},
		{[]string{"-p", "hi"}, false, true},
	} {
		_, add, err := sessionOf(tc.args)
		if (len(add) > 0) != tc.add || (err != nil) != tc.err {
			t.Errorf("%q: add %q, err %v", tc.args, add, err)
		}
		if len(add) == 2 && (len(add[1]) != 36 || add[1][14] != '4') {
			t.Errorf("%q: %q is not a UUID v4", tc.args, add[1])
		}
	}
}
