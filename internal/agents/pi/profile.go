// Package pi is the profile of pi, the coding agent (npm
// @mariozechner/pi-coding-agent): relay's extension (loaded with -e) gives
// its turns, the exact text of every message and a hold on each tool call,
// and hands the model relay's messages with pi.sendUserMessage.
package pi

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/scanner"
)

// MinMajor and MinMinor are the oldest pi whose extension API relay uses
// (sendUserMessage with deliverAs, blocking tool_call): 0.73.
const (
	MinMajor = 0
	MinMinor = 73
)

// Cues are what pi's screen shows: "Working..." while it works. Its input
// box is the row between two rules, with no prompt glyph, so the screen
// gives no draft: pi's own events give its turns.
func Cues() scanner.Cues {
	return scanner.Cues{Busy: []string{"Working..."}}
}

// Profile is pi's.
func Profile() agents.Profile {
	return agents.Profile{
		Name: "pi", CLI: "pi", Commands: []string{"pi"},
		Cues: Cues(), Paste: true, Settle: Settle, TypePrimer: true, Model: true,
		// pi names its window "π - FOLDER" once its TUI reads input; a
		// quiet screen before that is Node loading (seconds when loaded).
		ReadyTitle: "π - ",
		Exit:       func(string) string { return "/quit" },
		// Its window title is "π - FOLDER".
		Detect:   func(head []byte) bool { return bytes.Contains(head, []byte("\x1b]0;π - ")) },
		Exact:    exact,
		Diagnose: diagnose,
		Version:  func(path string) (string, error) { return agents.PackageVersion(path, Package) },
		Pin:      &agents.Pin{Package: Package, Version: "0.73.1", Folder: "pi", Bin: "pi", VersionText: "0.73.1"},
		Offline:  offline(),
	}
}

// diagnose says where relay reads pi's exact text, and whether this pi is
// new enough for relay's extension.
func diagnose(_ context.Context, p agents.Probe) agents.Diagnosis {
	d := agents.Diagnosis{
		ExactText: "relay's pi extension (-e): each message's text, its turns, tool calls; messages given with pi.sendUserMessage",
		State:     "relay's pi extension (agent_start, agent_end)",
		MCP:       "not registered: pi has no MCP client (its tools are extensions)",
	}
	major, v, ok := agents.Major(p.Version)
	if !ok {
		d.Problem = fmt.Sprintf("cannot read pi's version from %q", p.Version)
		return d
	}
	var minor int
	fmt.Sscanf(v, "%d.%d", new(int), &minor)
	if major < MinMajor || (major == MinMajor && minor < MinMinor) {
		d.Problem = fmt.Sprintf("pi %s is older than %d.%d, whose extension API relay uses", v, MinMajor, MinMinor)
		d.Fix = "npm install -g @mariozechner/pi-coding-agent@latest"
	}
	return d
}

// Package is pi's npm package.
const Package = "@mariozechner/pi-coding-agent"

// Settle is the pause between a paste and its Enter.
const Settle = 50 * time.Millisecond
