package opencode

import (
	"context"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/agents"
)

// TestDiagnoseVersion: relay doctor says when OpenCode is older than the
// release relay was checked with, and how to update it.
func TestDiagnoseVersion(t *testing.T) {
	for _, tc := range []struct{ version, problem string }{
		{"1.18.33", ""},
		{"2.0.0", ""},
		{"1.17.2", "older than 1.18"},
		{"", "cannot read"},
	} {
		d := diagnose(context.Background(), agents.Probe{Version: tc.version})
		if tc.problem == "" && d.Problem != "" || !strings.Contains(d.Problem, tc.problem) {
			t.Errorf("%q: problem %q, want %q", tc.version, d.Problem, tc.problem)
		}
		if tc.problem == "older than 1.18" && !strings.Contains(d.Fix, Package+"@latest") {
			t.Errorf("%q: fix %q", tc.version, d.Fix)
		}
	}
}
