// Package qwen is the profile of Qwen Code (npm @qwen-code/qwen-code), a
// fork of Gemini CLI: the same input box and busy footer, in the alternate
// screen, with a fixed window title ("Qwen - FOLDER").
package qwen

import (
	"bytes"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/scanner"
)

// Package is Qwen Code's npm package.
const Package = "@qwen-code/qwen-code"

// Cues are what Qwen Code's screen shows: Gemini CLI's input row and
// footer; "Initializing..." while it starts (it drops input typed then).
func Cues() scanner.Cues {
	return scanner.Cues{
		Busy:         []string{"esc to cancel", "Initializing..."},
		StartQuiet:   2 * time.Second,
		Prompt:       ">*!",
		Placeholders: []string{"Type your message or @path/to/file"},
	}
}

// Settle is the pause between a paste and its Enter: Gemini CLI's, whose
// input prompt Qwen Code keeps.
const Settle = 150 * time.Millisecond

// Profile is Qwen Code's.
func Profile() agents.Profile {
	return agents.Profile{
		Name: "qwen", CLI: "Qwen Code", Commands: []string{"qwen"},
		Cues: Cues(), Paste: true, Settle: Settle,
		// Over 1,000 characters or 10 lines, a paste becomes a
		// placeholder (LARGE_PASTE_CHAR_THRESHOLD, _LINE_ in 0.24.4) that
		// an early Enter sends as it is: "[Pasted Content 1488 chars]".
		PasteMax:   agents.PasteMax{Chars: 1000, Lines: 10},
		TypePrimer: true, Model: true, EscapeMentions: true,
		// Its title, set once its TUI is up: before, a quiet screen is Node
		// loading (over a minute at a load of 28), and typing is lost.
		ReadyTitle: "Qwen - ",
		Exit:       func(string) string { return "/quit" },
		Detect: func(head []byte) bool {
			return bytes.Contains(head, []byte("\x1b]0;Qwen - ")) || bytes.Contains(head, []byte("Qwen Code"))
		},
		Exact:       exact,
		Diagnose:    diagnose,
		Version:     func(path string) (string, error) { return agents.PackageVersion(path, Package) },
		MCP:         true,
		HookCommand: true,
		Pin:         &agents.Pin{Package: Package, Version: "0.24.4", Folder: "qwen-code", Bin: "qwen", VersionText: "0.24.4"},
		Offline:     offline(),
	}
}
