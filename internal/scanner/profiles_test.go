package scanner_test

import (
	"github.com/relayhq/relay/internal/agents/registry"
	"github.com/relayhq/relay/internal/scanner"
)

// The scanner's tests use the profiles' own cues (one source: agents/),
// handed to the internal test package before any test runs.
func init() {
	scanner.SetProfileCues(func(profile string) (scanner.Cues, bool) {
		p, err := registry.Named(profile)
		if err != nil {
			return scanner.Cues{}, false
		}
		return p.Cues, true
	})
}
