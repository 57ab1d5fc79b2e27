package cli

import (
	"os"
	"regexp"
	"testing"
)

// TestReadmeListsEveryCommand: README's command table has a row for every
// subcommand relay help lists (issue 33: stop, mcp and hook were missing).
func TestReadmeListsEveryCommand(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	row := regexp.MustCompile(`(?m)^\|.*$`)
	name := regexp.MustCompile("`relay ([a-z]+)")
	for _, line := range row.FindAllString(string(b), -1) {
		for _, m := range name.FindAllStringSubmatch(line, -1) {
			listed[m[1]] = true
		}
	}
	for cmd := range commands() {
		if !listed[cmd] {
			t.Errorf("README's command table has no row for relay %s", cmd)
		}
	}
}
