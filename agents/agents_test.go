package agents

import (
	"errors"
	"strings"
	"testing"
)

func TestFor(t *testing.T) {
	for _, tc := range []struct{ name, cmd, want string }{
		{"", "claude", "claude"},
		{"", "/usr/local/bin/claude", "claude"},
		{"", "codex", "codex"},
		{"", "gemini", "gemini"},
		{"", "aider", "aider"},
		{"", "bash", "generic"},
		{"", "claudette", "generic"},
		{"codex", "my-wrapper.sh", "codex"},
		{"Claude", "x", "claude"},
	} {
		p, err := For(tc.name, tc.cmd)
		if err != nil || p.Name != tc.want {
			t.Errorf("For(%q, %q) = %q, %v; want %q", tc.name, tc.cmd, p.Name, err, tc.want)
		}
	}
	if _, err := For("vim", "x"); !errors.Is(err, ErrUnknownProfile) || !strings.Contains(err.Error(), "known: aider, claude") {
		t.Errorf("unknown profile error: %v", err)
	}
}

func TestArgs(t *testing.T) {
	claude, _ := Named("claude")
	got := claude.Args([]string{"--model", "x"}, "PRIMER")
	if strings.Join(got, " ") != "--append-system-prompt PRIMER --model x" {
		t.Errorf("claude args %q", got)
	}
	gen, _ := Named("generic")
	if got := gen.Args([]string{"-i"}, "PRIMER"); len(got) != 1 {
		t.Errorf("generic args %q", got)
	}
}

func TestPrimerIsShort(t *testing.T) {
	p := Primer("Alice", "default", []string{"Bob", "Carol"})
	if len(p) > 1000 {
		t.Errorf("primer is %d bytes; keep it short", len(p))
	}
	for _, want := range []string{`"Alice"`, "Bob, Carol", "@relay:NAME", "@memory:save"} {
		if !strings.Contains(p, want) {
			t.Errorf("primer lacks %q", want)
		}
	}
}
