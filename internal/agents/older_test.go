package agents

import "testing"

func TestOlder(t *testing.T) {
	for _, tc := range []struct {
		version      string
		major, minor int
		v            string
		older, ok    bool
	}{
		{version: "1.18.33", major: 1, minor: 18, v: "1.18.33", ok: true},
		{version: "opencode 1.17.9", major: 1, minor: 18, v: "1.17.9", older: true, ok: true},
		{version: "0.9.0", major: 1, minor: 0, v: "0.9.0", older: true, ok: true},
		{version: "2.0.1", major: 1, minor: 18, v: "2.0.1", ok: true},
		{version: "0.24.4", major: 0, minor: 24, v: "0.24.4", ok: true},
		{version: "dev", major: 1, minor: 18},
	} {
		v, older, ok := Older(tc.version, tc.major, tc.minor)
		if v != tc.v || older != tc.older || ok != tc.ok {
			t.Errorf("Older(%q, %d, %d) = %q, %v, %v; want %q, %v, %v", tc.version, tc.major, tc.minor, v, older, ok, tc.v, tc.older, tc.ok)
		}
	}
}
