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
