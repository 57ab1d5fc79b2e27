package main

import "testing"

// TestLeanBuildRunsOnOneProc checks that only the lean build, which wraps
// agents, links internal/oneproc (GOMAXPROCS 1 from its first inits): the
// full one runs the hub and the dashboard.
func TestLeanBuildRunsOnOneProc(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const p = "github.com/relayhq/relay/internal/oneproc"
	for tags, want := range map[string]bool{"sqlite_fts5 lean": true, "sqlite_fts5": false} {
		if got := deps(t, tags)[p]; got != want {
			t.Errorf("-tags %q: %s linked = %v, want %v", tags, p, got, want)
		}
	}
}
