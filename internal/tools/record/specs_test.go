package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRecordingsMatchSpecs checks that every recording defined in specs.go
// is in testdata with the expectations the spec states, so that the files
// and their source do not drift apart.
func TestRecordingsMatchSpecs(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range allSpecs() {
		id := s.CLI + "/" + s.Name
		t.Run(id, func(t *testing.T) {
			if seen[id] {
				t.Fatalf("two recordings named %s", id)
			}
			seen[id] = true
			want := len(s.Prompts)
			if s.Tool != nil {
				want++
			}
			if len(s.Replies) != want {
				t.Fatalf("%d replies for %d prompts (tool call: %v)", len(s.Replies), len(s.Prompts), s.Tool != nil)
			}
			for _, c := range s.Must {
				if !strings.Contains(strings.Join(s.Replies, "\n"), "@"+c.NS+":"+c.Target) {
					t.Errorf("must command @%s:%s is not in the replies", c.NS, c.Target)
				}
			}
			base := filepath.Join("..", "..", "..", "testdata", "recordings", folderOf(s.CLI), s.Name)
			raw, err := os.ReadFile(base + ".raw")
			if err != nil {
				t.Fatalf("not recorded (run scripts/record -only %s): %v", id, err)
			}
			if len(raw) == 0 {
				t.Fatal("empty recording")
			}
			b, err := os.ReadFile(base + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var fx fixture
			if err := json.Unmarshal(b, &fx); err != nil {
				t.Fatalf("%s.json: %v", base, err)
			}
			if fx.Cols != s.Cols || fx.Rows != s.Rows || !reflect.DeepEqual(fx.Prompts, s.Prompts) ||
				!reflect.DeepEqual(fx.Must, nonNil(s.Must)) || !reflect.DeepEqual(fx.MustNot, nonNil(s.MustNot)) ||
				fx.AssistantText != s.Replies[0] {
				t.Errorf("%s.json differs from its spec: re-record with scripts/record -only %s", base, id)
			}
		})
	}
}
