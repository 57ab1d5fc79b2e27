// Package registry lists the agent CLIs relay knows, each from its own
// package. Adding a CLI is one package under agents/ and one line in All
// (then go generate ./internal/tools/schema): whatever lists CLIs outside
// agents/ reads this list (docs/agents.md, "Adding a CLI").
package registry

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/aider"
	"github.com/relayhq/relay/internal/agents/claude"
	"github.com/relayhq/relay/internal/agents/codex"
	"github.com/relayhq/relay/internal/agents/gemini"
	"github.com/relayhq/relay/internal/agents/opencode"
	"github.com/relayhq/relay/internal/agents/pi"
	"github.com/relayhq/relay/internal/agents/qwen"
	"github.com/relayhq/relay/internal/agents/shell"
)

// Generic is the name of the profile for programs no other profile names.
const Generic = "generic"

// All returns every profile, the generic one last.
func All() []agents.Profile {
	return []agents.Profile{
		claude.Profile(),
		codex.Profile(),
		qwen.Profile(), // before gemini: its stream may name Gemini
		gemini.Profile(),
		pi.Profile(),
		opencode.Profile(),
		aider.Profile(),
		shell.Profile(),
	}
}

// Names lists the known profiles, sorted.
func Names() []string {
	var names []string
	for _, p := range All() {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// Commands lists the programs that have a profile (each profile's first
// command), in the registry's order: what relay doctor looks for.
func Commands() []string {
	var out []string
	for _, p := range All() {
		if len(p.Commands) > 0 {
			out = append(out, p.Commands[0])
		}
	}
	return out
}

// Named returns the profile called name (any case).
func Named(name string) (agents.Profile, error) {
	for _, p := range All() {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
	}
	return agents.Profile{}, fmt.Errorf("%w %q (known: %s)", agents.ErrUnknownProfile, name, strings.Join(Names(), ", "))
}

// For returns the profile named name, or, when name is empty, the one whose
// Commands name the command's program (anything else is generic).
func For(name, command string) (agents.Profile, error) {
	if name != "" {
		return Named(name)
	}
	base := strings.ToLower(filepath.Base(command))
	for _, p := range All() {
		if p.Matches(base) {
			return p, nil
		}
	}
	return Named(Generic)
}

// Detect guesses which CLI wrote a terminal stream from its first bytes (a
// window title, a banner, a state report); "" when it cannot tell.
func Detect(head []byte) string {
	for _, p := range All() {
		if p.Detect != nil && p.Detect(head) {
			return p.Name
		}
	}
	return ""
}

// CLIsWhere lists, in the registry's order, the programs' names for people
// (Profile.CLI, "Claude Code") of the profiles keep accepts: for help
// texts that name the CLIs relay does something for.
func CLIsWhere(keep func(agents.Profile) bool) []string {
	var out []string
	for _, p := range All() {
		if keep(p) {
			out = append(out, p.CLI)
		}
	}
	return out
}

// JoinWords joins words for prose: "a", "a and b", "a, b and c" with
// conj "and" (or "or").
func JoinWords(words []string, conj string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}
