// Package opencode is the profile of OpenCode (npm opencode-ai). Its input
// box is framed: rows starting with "┃", the draft above its last row (the
// agent and model line). relay reads each reply's exact text from
// OpenCode's database and posts messages to its server (server.go), typing
// into its input box only until a session exists or when a post fails.
package opencode

import (
	"bytes"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/scanner"
)

// Package is OpenCode's npm package.
const Package = "opencode-ai"

// Cues are what OpenCode's screen shows: "esc interrupt" in its footer
// while it works; its input box framed by "┃" on the left, the draft on
// the rows above the agent and model line; "Ask anything…" in the empty
// box of its home screen.
func Cues() scanner.Cues {
	return scanner.Cues{
		Busy:         []string{"esc interrupt"},
		Prompt:       "┃",
		InputFrame:   true,
		Placeholders: []string{"Ask anything"},
	}
}

// Profile is OpenCode's.
func Profile() agents.Profile {
	return agents.Profile{
		Name: "opencode", CLI: "OpenCode", Commands: []string{"opencode"},
		Cues: Cues(), Paste: true, Settle: Settle, TypePrimer: true, Model: true,
		// Its TUI names the window once it has drawn its home screen
		// ("OC | TITLE" in a session); before, its screen is blank for
		// up to minutes on a loaded machine, and typing is lost.
		ReadyTitle: "OpenCode",
		Exit:       func(string) string { return "/exit" },
		// Its window title is "OpenCode", then "OC | TITLE".
		Detect:   func(head []byte) bool { return bytes.Contains(head, []byte("\x1b]0;OpenCode")) },
		Exact:    exact,
		Diagnose: diagnose,
		Version:  func(path string) (string, error) { return agents.PackageVersion(path, Package) },
		MCP:      true,
		Pin:      &agents.Pin{Package: Package, Version: "1.18.33", Folder: "opencode", Bin: "opencode", VersionText: "1.18.33"},
		Offline:  offline(),
	}
}

// Settle is the pause between a paste and its Enter.
const Settle = 150 * time.Millisecond
