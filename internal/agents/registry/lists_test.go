package registry

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestSchemaListsEveryProfile checks that docs/config.schema.json names
// every profile of the registry for the profile key, so that a CLI added
// to the registry is also documented there.
func TestSchemaListsEveryProfile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../../docs/config.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatalf("docs/config.schema.json: %v", err)
	}
	want := "(" + strings.Join(Names(), ", ") + ")"
	if d := schema.Properties["profile"].Description; !strings.Contains(d, want) {
		t.Errorf("schema's profile description %q does not list %s", d, want)
	}
}

// TestPins checks every pinned release is whole: the installer and the
// tests read nothing else.
func TestPins(t *testing.T) {
	t.Parallel()
	n := 0
	for _, p := range All() {
		if p.Pin == nil {
			continue
		}
		n++
		pin := *p.Pin
		if pin.Package == "" || pin.Version == "" || pin.Folder == "" || pin.Bin == "" || pin.VersionText == "" {
			t.Errorf("%s: incomplete pin %+v", p.Name, pin)
		}
		if p.Offline != nil && (p.Offline.API == "" || p.Offline.Setup == nil || p.Offline.Ready == nil) {
			t.Errorf("%s: incomplete Offline %+v", p.Name, *p.Offline)
		}
	}
	if n < 3 {
		t.Errorf("only %d pinned CLIs", n)
	}
}
