// Package shell is the profile of a plain terminal program: a shell, a
// script, a REPL. Its lines end where it breaks them, nothing is labelled
// for a model, and messages arrive as comment lines.
package shell

import (
	"path/filepath"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/scanner"
)

// Profile is the generic profile, for any program no other profile names.
// It is no model: after relay typed a line, the session counts it ready
// again as soon as it echoed the line and its prompt is back (or, without
// a prompt, the Enter was echoed), and falls back on screen quiet
// (Cues.QuietTime) only when the screen never shows that.
func Profile() agents.Profile {
	return agents.Profile{
		Name: "generic", CLI: "shell",
		Cues:  scanner.Cues{LineBreaksEnd: true},
		Paste: true, Settle: 2 * time.Millisecond,
		Exit: shellExit,
	}
}

// shellExit is `exit` for a shell; any other program is ended by a signal
// (typing a word into it could be taken as its input).
func shellExit(command string) string {
	switch filepath.Base(command) {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "tcsh", "csh":
		return "exit"
	}
	return ""
}
