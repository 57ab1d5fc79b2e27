// Package aider is the profile of aider: a model CLI whose only screen cue
// is its input prompt, which learns the protocol by a typed primer.
package aider

import (
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/scanner"
)

// Cues are what aider's screen shows: its input prompt, `> ` (after the
// edit format when it is not the model's default: `ask> `, `architect> `).
// The prompt row and what the human types on it are never a command's
// body, also once submitted (aider leaves each input on screen), and a
// command right above the prompt is final at once.
func Cues() scanner.Cues {
	return scanner.Cues{
		Prompt: ">", InputHistory: true,
		// The chat mode or edit format when it is not the model's own,
		// and "multi" in multi-line mode.
		PromptModes: []string{
			"ask", "code", "architect", "help", "context", "multi",
			"whole", "diff", "diff-fenced", "udiff", "udiff-simple", "patch",
			"editor-diff", "editor-whole", "editor-diff-fenced",
		},
	}
}

// Profile is aider's.
func Profile() agents.Profile {
	return agents.Profile{
		Name: "aider", CLI: "aider", Commands: []string{"aider"},
		Cues:  Cues(),
		Paste: true, Settle: 150 * time.Millisecond,
		TypePrimer: true, Model: true,
		Exit: func(string) string { return "/exit" },
	}
}
