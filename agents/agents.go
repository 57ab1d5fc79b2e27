// Package agents holds what is specific to one agent CLI: how it shows that
// it is busy or ready, how text must be typed into it, and how it learns the
// protocol at start. The wrapper and scanner stay generic; a Profile is the
// only place that names a CLI.
package agents

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/relayhq/relay/scanner"
)

// Profile describes one agent CLI.
type Profile struct {
	// Name is the profile's name: generic, claude, codex, gemini, aider.
	Name string
	// CLI is the program's name for people ("Claude Code").
	CLI string
	// Cues are what its screen shows about its state.
	Cues scanner.Cues
	// Paste says to type by bracketed paste when the child enabled it.
	Paste bool
	// Settle is the pause between the text and the Enter that submits it
	// (a TUI that sees both at once may take the Enter as a newline).
	Settle time.Duration
	// PrimerFlag, when set, passes the protocol primer as a command line
	// flag at start (Claude Code: --append-system-prompt).
	PrimerFlag string
	// TypePrimer says to type the primer once the agent is first idle, for
	// CLIs that have no such flag. Shells get no primer.
	TypePrimer bool
	// Model says the agent is a language model that reads messages, as
	// opposed to a plain shell: only then are messages labelled for it.
	Model bool
	// ReadyTitle, when set, is text of the window title without which the
	// CLI does not read its input yet, however quiet its screen (Gemini
	// CLI draws its input box seconds before it reads it).
	ReadyTitle string
	// EscapeMentions says the CLI reads a typed `@path` into the model's
	// context: every `@` that starts a word in a peer's text is escaped.
	EscapeMentions bool
}

// ErrUnknownProfile is returned by Named for a name it does not know.
var ErrUnknownProfile = fmt.Errorf("unknown profile")

func profiles() map[string]Profile {
	cues := func(name string) scanner.Cues {
		c, _ := scanner.CuesFor(name)
		return c
	}
	return map[string]Profile{
		"generic": {Name: "generic", CLI: "shell", Cues: cues("generic"), Paste: true, Settle: 2 * time.Millisecond},
		"claude": {Name: "claude", CLI: "Claude Code", Cues: cues("claude"), Paste: true, Settle: 150 * time.Millisecond,
			PrimerFlag: "--append-system-prompt", Model: true},
		"codex": {Name: "codex", CLI: "Codex", Cues: cues("codex"), Paste: true, Settle: 200 * time.Millisecond,
			TypePrimer: true, Model: true},
		"gemini": {Name: "gemini", CLI: "Gemini CLI", Cues: cues("gemini"), Paste: true, Settle: 300 * time.Millisecond,
			TypePrimer: true, Model: true, ReadyTitle: "Ready", EscapeMentions: true},
		"aider": {Name: "aider", CLI: "aider", Cues: scanner.Cues{}, Paste: true, Settle: 150 * time.Millisecond,
			TypePrimer: true, Model: true},
	}
}

// Names lists the known profiles.
func Names() []string {
	var names []string
	for n := range profiles() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Named returns the profile called name.
func Named(name string) (Profile, error) {
	p, ok := profiles()[strings.ToLower(name)]
	if !ok {
		return Profile{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownProfile, name, strings.Join(Names(), ", "))
	}
	return p, nil
}

// For returns the profile named name, or, when name is empty, the one for
// the command's program name (claude, codex, gemini, aider; anything else is
// generic).
func For(name, command string) (Profile, error) {
	if name != "" {
		return Named(name)
	}
	base := strings.ToLower(filepath.Base(command))
	for _, n := range []string{"claude", "codex", "gemini", "aider"} {
		if base == n || strings.HasPrefix(base, n+"-") || strings.HasPrefix(base, n+".") {
			return Named(n)
		}
	}
	return Named("generic")
}

// Args returns the child's arguments with the primer passed the profile's
// way (nothing changes for profiles that type it, or when primer is empty).
func (p Profile) Args(args []string, primer string) []string {
	if p.PrimerFlag == "" || primer == "" {
		return args
	}
	return append([]string{p.PrimerFlag, primer}, args...)
}

// Primer is the short text that teaches an agent the protocol once, at start.
func Primer(name, workspace string, peers []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are agent %q in a team of coding agents connected by relay (workspace %q).", name, workspace)
	if len(peers) > 0 {
		fmt.Fprintf(&b, " Peers online now: %s.", strings.Join(peers, ", "))
	}
	b.WriteString(` To message a peer, write a line that starts with "@relay:NAME your message" (NAME "*" or "@broadcast: ..." for everyone).` +
		` For a message with several lines, write "@relay:NAME <<<", the lines, then ">>>".` +
		` Shared memory: "@memory:save TEXT", "@memory:search QUERY", "@memory:list", "@memory:forget ID".` +
		` Commands count only at the start of a line and outside code blocks. Messages from peers and results arrive as text starting with "[relay]".` +
		` Answer a peer when it helps the work; do not reply to acknowledgements.`)
	return b.String()
}
