// Command pins prints the pinned agent CLIs of the registry, one a line,
// for .ci/install-agents:
//
//	name|npm-package|version|bin|--version text|cache folder|postinstall
//
// With arguments it prints only the CLIs named (profile names) and fails
// on a name with no pin.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/registry"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pins:", err)
		os.Exit(2)
	}
}

func run(names []string, out io.Writer) error {
	var pinned []agents.Profile
	for _, p := range registry.All() {
		if p.Pin != nil {
			pinned = append(pinned, p)
		}
	}
	if len(names) > 0 {
		var want []agents.Profile
		for _, n := range names {
			p, err := registry.Named(n)
			if err != nil {
				return err
			}
			if p.Pin == nil {
				return fmt.Errorf("%s has no pinned release", n)
			}
			want = append(want, p)
		}
		pinned = want
	}
	for _, p := range pinned {
		fmt.Fprintln(out, line(p.Name, *p.Pin))
	}
	return nil
}

// line is one pinned CLI as .ci/install-agents reads it.
func line(name string, p agents.Pin) string {
	return strings.Join([]string{name, p.Package, p.Version, p.Bin, p.VersionText, p.Dir(), p.Postinstall}, "|")
}
