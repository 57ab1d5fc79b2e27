package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/team"
)

// TestDemoTeamFile: the team file relay demo --team writes is one relay
// team up takes: no mistake, every agent's script beside it, Alice's
// prompt the cue her script waits for.
func TestDemoTeamFile(t *testing.T) {
	dir := t.TempDir()
	path, err := writeDemoTeam(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := team.Load(path)
	if err != nil {
		t.Fatalf("the demo's team file: %v", err)
	}
	if f.Workspace != demoTeamWorkspace || len(f.Agents) != 3 {
		t.Fatalf("workspace %q, %d agents; want %q and 3", f.Workspace, len(f.Agents), demoTeamWorkspace)
	}
	for _, a := range f.Agents {
		if _, err := os.Stat(filepath.Join(f.Dir, a.Command[1])); err != nil {
			t.Errorf("%s's script: %v", a.Name, err)
		}
	}
	alice, _ := f.Named("Alice")
	cue, _, _ := strings.Cut(alice.Prompt, ":")
	if !strings.Contains(demoTeamAlice, `*"`+cue+`"*)`) {
		t.Errorf("Alice's script does not wait for her prompt's %q", cue)
	}
}

// TestPrefixWriter: every line gets the prefix once, however it is cut
// into writes.
func TestPrefixWriter(t *testing.T) {
	var b strings.Builder
	w := newPrefixWriter(&b, "> ")
	for _, s := range []string{"a\tb", "\tc\n", "d\n\ne", "\n"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if want := "> a\tb\tc\n> d\n> \n> e\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
