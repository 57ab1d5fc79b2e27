package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMainStackGrowsFirst checks that internal/mainstack's init, which
// grows the main goroutine's stack while it is shallow, runs before the
// package inits that would grow it deeper (encoding/gob's, linked by
// nats.go, was the first). It runs this test binary again, which links
// what relay links, with the runtime printing each package init in order.
func TestMainStackGrowsFirst(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, out)
	}
	order := map[string]int{}
	for i, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			if _, ok := order[f[1]]; !ok {
				order[f[1]] = i
			}
		}
	}
	ms, ok := order["github.com/relayhq/relay/internal/mainstack"]
	if !ok {
		t.Fatalf("internal/mainstack's init did not run:\n%s", out)
	}
	for _, later := range []string{"encoding/gob", "github.com/relayhq/relay/internal/cli"} {
		if i, ok := order[later]; ok && i < ms {
			t.Errorf("%s's init ran before internal/mainstack's:\n%s", later, out)
		}
	}
	if _, ok := order["encoding/gob"]; !ok {
		t.Errorf("encoding/gob's init did not run: the check above checked nothing:\n%s", out)
	}
}

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
