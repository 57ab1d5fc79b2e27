package team

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/config"
)

func TestParse(t *testing.T) {
	const name = "/p/.relay/team.toml"
	tests := []struct {
		name string
		file string
		want []string // each error line, in order; none: valid
	}{
		{"valid", `
[team]
workspace = "demo"
[[agent]]
name = "Alice"
command = ["claude"]
prompt = "review"
[[agent]]
name = "Bob"
command = ["codex", "--dangerously-bypass-approvals-and-sandbox"]
unsafe = true
worktree = true
env = { KEY = "v" }
cwd = "sub"
`, nil},
		{"misspelt keys, all at once", `
[[agent]]
name = "Alice"
comand = ["claude"]
[[agent]]
name = "Bob"
command = ["sh"]
promt = "x"
`, []string{
			name + ":4:1: agent.comand: unknown key (did you mean \"command\"?)",
			name + ":8:1: agent.promt: unknown key (did you mean \"prompt\"?)",
		}},
		{"missing, twice, unsafe, bad profile", `
[[agent]]
name = "Alice"
[[agent]]
name = "alice"
command = ["claude", "--dangerously-skip-permissions"]
profile = "claud"
[[agent]]
command = ["codex", "--yolo"]
`, []string{
			name + ":2:3: agent[0]: missing command: a list of strings, as in command = [\"claude\"]",
			name + ":5:1: agent[1].name: \"alice\" is named twice (first as \"Alice\")",
			name + ":6:1: agent[1].command[1]: --dangerously-skip-permissions switches the agent's own safety off: refused unless the agent says unsafe = true",
			name + ":7:1: agent[1].profile: unknown profile \"claud\" (did you mean \"claude\"?)",
			name + ":8:3: agent[2]: missing name",
			name + ":9:1: agent[2].command[1]: --yolo switches the agent's own safety off: refused unless the agent says unsafe = true",
		}},
		{"wrong type", `
[[agent]]
name = "Alice"
command = "claude"
`, []string{name + ":4:11: agent.command: wrong type: want a list of strings, have a string"}},
		{"no agent", `[team]
workspace = "bad name"
`, []string{name + ":2:1: team.workspace: workspace name \"bad name\" has ' ' at byte 3: use letters, digits, '_' and '-' (starting with a letter or digit)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(name, []byte(tt.file))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if f.Workspace != "demo" || len(f.Agents) != 2 || f.Agents[1].Cwd != "/p/sub" || !f.Agents[1].Worktree || f.Agents[0].Prompt != "review" {
					t.Errorf("parsed: %+v", f)
				}
				return
			}
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("want ErrInvalid, got %v", err)
			}
			got := strings.Split(err.Error(), "\n")
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", err, strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".relay"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(sub); !errors.Is(err, ErrNoFile) {
		t.Fatalf("want ErrNoFile, got %v", err)
	}
	want := filepath.Join(root, ".relay", FileName)
	if err := os.WriteFile(want, []byte("[[agent]]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(sub); err != nil || got != want {
		t.Errorf("Find = %q, %v; want %q", got, err, want)
	}
}
