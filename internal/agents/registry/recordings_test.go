package registry

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/scanner"
)

// TestRecordings: each recording of a real CLI under testdata/recordings is
// told apart by Detect, and the cues of the profile it picks find every
// command the recording must yield, each once (collapsing white space).
func TestRecordings(t *testing.T) {
	files, _ := filepath.Glob("../../../testdata/recordings/*/*.json")
	if len(files) == 0 {
		t.Fatal("no recordings under testdata/recordings")
	}
	for _, f := range files {
		raw := strings.TrimSuffix(f, ".json") + ".raw"
		data, err := os.ReadFile(raw)
		if err != nil {
			continue
		}
		name := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(raw)
		t.Run(name, func(t *testing.T) {
			var rec struct {
				Must []struct{ NS, Target, Body string } `json:"must"`
			}
			meta, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(meta, &rec); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			dir := filepath.Base(filepath.Dir(f))
			want := ""
			for _, p := range All() {
				if p.Pin != nil && strings.HasPrefix(dir, p.Pin.Folder+"-") {
					want = p.Name
				}
			}
			got := Detect(data[:min(len(data), 64<<10)])
			if got != want {
				t.Fatalf("detected %q, want %q", got, want)
			}
			var cues scanner.Cues
			if got != "" {
				p, err := Named(got)
				if err != nil {
					t.Fatal(err)
				}
				cues = p.Cues
			}
			ns, _ := patterns.NewNamespaces()
			for _, m := range rec.Must {
				_ = ns.Add(m.NS)
			}
			var cmds []patterns.Command
			err = scanner.Replay(context.Background(), strings.NewReader(string(data)), scanner.ReplayOptions{Name: raw, Namespaces: ns, Cues: cues}, func(e scanner.Event) {
				if e.Kind == scanner.EventCommand {
					cmds = append(cmds, e.Command)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			collapse := func(s string) string { return strings.Join(strings.Fields(s), " ") }
			for _, m := range rec.Must {
				found := false
				for _, c := range cmds {
					if c.NS == m.NS && c.Target == m.Target && collapse(c.Body) == collapse(m.Body) {
						found = true
					}
				}
				if !found {
					t.Errorf("@%s:%s %q not found; found %+v", m.NS, m.Target, m.Body, cmds)
				}
			}
		})
	}
	if got := Detect([]byte("$ ls\r\nfile\r\n")); got != "" {
		t.Errorf("a shell detected as %q", got)
	}
}
