package registry

import "testing"

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
