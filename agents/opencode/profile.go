// Package opencode is the profile of OpenCode (npm opencode-ai). Only its
// pin, its offline setup, its version and doctor's line are checked: its
// screen cues are the ("Ask anything" when ready), not yet seen
// under relay (its renderer drew a blank screen for 60 s on a loaded
// test machine), and relay reads no exact text from it yet.
package opencode

import (
	"github.com/relayhq/relay/agents"
	"github.com/relayhq/relay/scanner"
)

// Package is OpenCode's npm package.
const Package = "opencode-ai"

// Cues are what OpenCode's screen shows.
func Cues() scanner.Cues {
	return scanner.Cues{Busy: []string{"esc interrupt"}, Placeholders: []string{"Ask anything"}}
}

// Profile is OpenCode's.
func Profile() agents.Profile {
	return agents.Profile{
		Name: "opencode", CLI: "OpenCode", Commands: []string{"opencode"},
		Cues: Cues(), Paste: true, TypePrimer: true, Model: true,
		Version: func(path string) (string, error) { return agents.PackageVersion(path, Package) },
		Pin:     &agents.Pin{Package: Package, Version: "1.18.33", Folder: "opencode", Bin: "opencode", VersionText: "1.18.33"},
		Offline: offline(),
	}
}
