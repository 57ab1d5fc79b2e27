// Package aider is the profile of aider: a model CLI without screen cues,
// which learns the protocol by a typed primer.
package aider

import (
	"time"

	"github.com/relayhq/relay/agents"
)

// Profile is aider's.
func Profile() agents.Profile {
	return agents.Profile{
		Name: "aider", CLI: "aider", Commands: []string{"aider"},
		Paste: true, Settle: 150 * time.Millisecond,
		TypePrimer: true, Model: true,
		Exit: func(string) string { return "/exit" },
	}
}
