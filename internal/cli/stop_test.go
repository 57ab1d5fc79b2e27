package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestParseStop: the name and --timeout in either order; mistakes are
// usage errors.
func TestParseStop(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		name    string
		timeout time.Duration
		bad     bool
	}{
		{args: []string{"Alice"}, name: "Alice", timeout: 2 * time.Minute},
		{args: []string{"--timeout", "30s", "Alice"}, name: "Alice", timeout: 30 * time.Second},
		{args: []string{"Alice", "--timeout", "30s"}, name: "Alice", timeout: 30 * time.Second},
		{args: []string{}, bad: true},
		{args: []string{"Alice", "Bob"}, bad: true},
		{args: []string{"bad name"}, bad: true},
		{args: []string{"--timeout", "0s", "Alice"}, bad: true},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var errb bytes.Buffer
			o, err := parseStop(&Env{Stderr: &errb, Getenv: func(string) string { return "" }}, tc.args)
			if tc.bad {
				if err == nil {
					t.Fatalf("accepted: %+v", o)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.name != tc.name || o.timeout != tc.timeout {
				t.Errorf("got %q %v, want %q %v", o.name, o.timeout, tc.name, tc.timeout)
			}
		})
	}
}
