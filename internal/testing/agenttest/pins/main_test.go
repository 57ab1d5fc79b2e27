package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/agents/registry"
)

// TestPrintsEveryPin: .ci/install-agents installs what this prints, one
// line per CLI of the registry with a Pin, so a CLI added to the registry
// is installed with no edit of the script; and the script reads as many
// fields as a line has.
func TestPrintsEveryPin(t *testing.T) {
	var out bytes.Buffer
	if err := run(nil, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	n := 0
	for _, p := range registry.All() {
		if p.Pin == nil {
			continue
		}
		n++
		want := line(p.Name, *p.Pin)
		found := false
		for _, l := range lines {
			found = found || l == want
		}
		if !found {
			t.Errorf("%s: no line %q in\n%s", p.Name, want, out.String())
		}
	}
	if len(lines) != n {
		t.Errorf("%d lines for %d pinned CLIs:\n%s", len(lines), n, out.String())
	}

	script, err := os.ReadFile("../../../../.ci/install-agents")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`IFS='\|' read -r ([a-z ]+) <<<`).FindSubmatch(script)
	if m == nil {
		t.Fatal(".ci/install-agents: no IFS='|' read line")
	}
	if vars, fields := len(strings.Fields(string(m[1]))), strings.Count(lines[0], "|")+1; vars != fields {
		t.Errorf(".ci/install-agents reads %d fields (%s), a line has %d", vars, m[1], fields)
	}
	if bytes.Contains(script, []byte(`"$name" =`)) {
		t.Error(".ci/install-agents tests a CLI's name: what differs between CLIs belongs in their Pin")
	}
}

func TestNamedPins(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"codex"}, &out); err != nil || !strings.HasPrefix(out.String(), "codex|") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("run(codex) = %q, %v", out.String(), err)
	}
	if err := run([]string{"shell"}, &out); err == nil {
		t.Error("a profile without a pin: want an error")
	}
	if err := run([]string{"nosuch"}, &out); err == nil {
		t.Error("an unknown profile: want an error")
	}
}
