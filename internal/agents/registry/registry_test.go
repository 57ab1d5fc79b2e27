package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/agents"
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
	if _, err := For("vim", "x"); !errors.Is(err, agents.ErrUnknownProfile) || !strings.Contains(err.Error(), "known: aider, claude") {
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
	p := agents.Primer("Alice", "default", []string{"Bob", "Carol"})
	if len(p) > 1000 {
		t.Errorf("primer is %d bytes; keep it short", len(p))
	}
	for _, want := range []string{`"Alice"`, "Bob, Carol", "@relay:NAME", "@memory:save"} {
		if !strings.Contains(p, want) {
			t.Errorf("primer lacks %q", want)
		}
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct{ head, want string }{
		{"\x1b]0;✳ Claude Code\x07", "claude"},
		{"\x1b]7501;state=idle\x07", "codex"},
		{">_ OpenAI Codex (v0.169.0)", "codex"},
		{"GEMINI CLI", "gemini"},
		{"$ ls", ""},
	} {
		if got := Detect([]byte(tc.head)); got != tc.want {
			t.Errorf("Detect(%q) = %q, want %q", tc.head, got, tc.want)
		}
	}
}

// TestProfilesAreDistinct: every profile has a name of its own and the
// generic one matches no program by name.
func TestProfilesAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range All() {
		if seen[p.Name] {
			t.Errorf("profile %q listed twice", p.Name)
		}
		seen[p.Name] = true
		if p.Name == Generic && len(p.Commands) > 0 {
			t.Errorf("the generic profile names programs: %v", p.Commands)
		}
	}
}

func TestJoinWords(t *testing.T) {
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a or b"},
		{[]string{"a", "b", "c"}, "a, b or c"},
	} {
		if got := JoinWords(tc.words, "or"); got != tc.want {
			t.Errorf("JoinWords(%q) = %q, want %q", tc.words, got, tc.want)
		}
	}
	got := CLIsWhere(func(p agents.Profile) bool { return p.Name == "claude" || p.Name == "codex" })
	if strings.Join(got, ",") != "Claude Code,Codex" {
		t.Errorf("CLIsWhere = %q", got)
	}
}
