package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNothingStartedOrCreated: relay wrap of a command that is not there
// fails at once (exit 1, naming it) and creates no state folder and
// starts no hub; commands that only read (log, agents, memory list and
// search) with no hub create no state folder either.
func TestNothingStartedOrCreated(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"wrap missing command", []string{"wrap", "--", "no-such-agent-cli"}, ExitFailure, `"no-such-agent-cli" is not in PATH`},
		{"wrap missing path", []string{"wrap", "--", "./no/such/agent"}, ExitFailure, "command not found: ./no/such/agent"},
		{"log", []string{"log"}, ExitFailure, "no hub running"},
		{"log json", []string{"log", "--json"}, ExitFailure, "no hub running"},
		{"agents", []string{"agents"}, ExitFailure, "no hub running"},
		{"memory list", []string{"memory", "list"}, ExitOK, "no memories in"},
		{"memory search", []string{"memory", "search", "vpn"}, ExitOK, "no memories in"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newHubCLI(t)
			c.home = filepath.Join(t.TempDir(), "state")
			c.vars["RELAY_HOME"] = c.home
			code, _, errs := c.run("", tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.wantCode, errs)
			}
			if !strings.Contains(errs, tc.wantErr) {
				t.Errorf("stderr %q does not say %q", errs, tc.wantErr)
			}
			if _, err := os.Stat(c.home); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("relay %s created the state folder %s (stat: %v)", strings.Join(tc.args, " "), c.home, err)
			}
		})
	}
}
