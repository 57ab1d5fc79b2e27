package patterns

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is one recording's NAME.json: the raw text the model produced and
// what a scanner must and must not find in it.
type fixture struct {
	AssistantText string   `json:"assistant_text"`
	Prompts       []string `json:"prompts"`
	Must          []struct {
		NS, Target, Body string
	} `json:"must"`
	MustNot []struct{ NS, Target string } `json:"must_not"`
	Either  []struct{ NS, Target string } `json:"either"`
}

// collapse folds runs of white space to one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestRecordingsRawText checks every recording folder's fixtures: the raw
// (markdown) path finds exactly the must commands, with their exact words,
// and none of must_not or either. A recording answers each of its prompts
// with the same assistant_text, so the raw path reads it once per prompt.
func TestRecordingsRawText(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/recordings/*/*.json")
	if len(files) == 0 {
		t.Fatal("no recordings under ../../testdata/recordings")
	}
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var fx fixture
			if err := json.Unmarshal(data, &fx); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			ns, _ := NewNamespaces()
			for _, m := range fx.Must {
				if err := ns.Add(m.NS); err != nil {
					t.Fatal(err)
				}
			}
			// The mock model gave the same reply to every prompt.
			var cmds []Command
			for range max(1, len(fx.Prompts)) {
				cmds = append(cmds, ExtractText(fx.AssistantText, Options{Namespaces: ns})...)
			}
			if len(cmds) != len(fx.Must) {
				t.Errorf("found %d commands, want %d: %+v", len(cmds), len(fx.Must), cmds)
			}
			for i, m := range fx.Must {
				if i >= len(cmds) {
					break
				}
				c := cmds[i]
				body, want := c.Body, m.Body
				if !c.Block {
					body, want = collapse(body), collapse(want)
				}
				if c.NS != m.NS || c.Target != m.Target || body != want {
					t.Errorf("command %d: have @%s:%s %q, want @%s:%s %q", i, c.NS, c.Target, c.Body, m.NS, m.Target, m.Body)
				}
			}
			bad := append(fx.MustNot, fx.Either...)
			for _, c := range cmds {
				for _, b := range bad {
					if c.NS == b.NS && c.Target == b.Target {
						t.Errorf("fired @%s:%s %q, which must not fire on the raw path", c.NS, c.Target, c.Body)
					}
				}
			}
		})
	}
}
