// Package opencode is the profile of OpenCode (npm opencode-ai). Its pin,
// its offline setup, its version, doctor's line and its start (ready once
// its window title says "OpenCode") are checked; its input box, whose last
// row is its agent and model line, is not read yet, and relay reads no
// exact text from it yet.
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
		// Its TUI names the window once it has drawn its home screen
		// ("OC | TITLE" in a session); before, its screen is blank for
		// up to minutes on a loaded machine, and typing is lost.
		ReadyTitle: "OpenCode",
		Version:    func(path string) (string, error) { return agents.PackageVersion(path, Package) },
		Pin:        &agents.Pin{Package: Package, Version: "1.18.33", Folder: "opencode", Bin: "opencode", VersionText: "1.18.33"},
		Offline:    offline(),
	}
}
