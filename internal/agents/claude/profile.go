package claude

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/scanner"
	"github.com/relayhq/relay/internal/screen"
)

// Cues are what Claude Code's screen shows about its state.
func Cues() scanner.Cues {
	return scanner.Cues{
		Busy:       []string{"esc to interrupt"},
		Prompt:     "❯",
		Dialogs:    Dialogs(),
		Spinner:    "✢✳✶✻✽·*",
		CodeColors: []screen.Color{screen.PaletteColor(153)},
	}
}

// Dialogs are the questions of Claude Code's permission dialogs (2.1.328):
// a Bash command, an edit, a new file, a fetch. While one is on screen the
// agent waits on its human; once none is, the human answered.
func Dialogs() []string {
	return []string{"Do you want to proceed?", "Do you want to make this edit to", "Do you want to create ", "Do you want to allow "}
}

// Settle is the pause between a paste and its Enter for Claude Code. Relay
// presses Enter only once the input box shows the paste, and Claude Code
// takes an Enter right after it (TestClaudeEnterAfterPasteRealCLI): the
// pause is a small margin, not a wait. It was 150 ms, added to every
// message typed in.
const Settle = 20 * time.Millisecond

// Profile is Claude Code's: the primer as a system prompt flag, bracketed
// paste, and its hooks and transcript as the exact path.
func Profile() agents.Profile {
	return agents.Profile{
		Name: "claude", CLI: "Claude Code", Commands: []string{"claude"},
		Cues: Cues(), Paste: true, Settle: Settle,
		PrimerFlag: "--append-system-prompt", Model: true,
		Exit:        func(string) string { return "/exit" },
		Detect:      func(head []byte) bool { return bytes.Contains(head, []byte("Claude Code")) },
		Exact:       exact,
		Diagnose:    diagnose,
		MCP:         true,
		HookCommand: true,
		Pin: &agents.Pin{Package: "@anthropic-ai/claude-code", Version: "2.1.328", Folder: "claude-code", Bin: "claude", VersionText: "2.1.328 (Claude Code)",
			Postinstall: "@anthropic-ai/claude-code/install.cjs"},
		Offline: offline(),
	}
}

// MinMajor is the oldest Claude Code whose hooks relay uses: 2.x has
// --settings, Stop's last_assistant_message and the transcript format.
const MinMajor = 2

// TooOld says why a Claude Code version line is too old for relay's hooks;
// "" when it is not, and why it cannot tell when the version is unreadable
// (unreadable reports true).
func TooOld(version string) (why string, unreadable bool) {
	major, v, ok := agents.Major(version)
	if !ok {
		return fmt.Sprintf("cannot read the version in %q", version), true
	}
	if major < MinMajor {
		return fmt.Sprintf("Claude Code %s is older than %d.0", v, MinMajor), false
	}
	return "", false
}

// exact prepares the hook path: when this Claude Code is new enough and a
// relay binary can run the hooks, its settings flag, the socket's
// environment and the Source that answers them.
func exact(l agents.Launch) (agents.Setup, error) {
	path, err := exec.LookPath(l.Command)
	if err != nil {
		return agents.Setup{}, fmt.Errorf("hooks of Claude Code are not used: %w", err)
	}
	v, err := agents.CachedVersion(context.Background(), l.Home, path)
	if err != nil {
		return agents.Setup{}, fmt.Errorf("hooks of Claude Code are not used: %w", err)
	}
	if why, _ := TooOld(v); why != "" {
		return agents.Setup{}, fmt.Errorf("hooks of Claude Code are not used: %s", why)
	}
	return startHooks(l)
}

// diagnose says what relay doctor sees of Claude Code's exact path.
func diagnose(_ context.Context, p agents.Probe) agents.Diagnosis {
	var d agents.Diagnosis
	if old, unreadable := TooOld(p.Version); old != "" && !unreadable {
		d.ExactText = "screen (" + old + ": relay does not use its hooks; upgrade it for the exact path)"
		return d
	}
	if p.RelayBinary == "" {
		d.ExactText = "screen (no relay binary for its hooks)"
		d.Problem = "Claude Code's hooks run `relay hook`, and relay is not on PATH"
		d.Fix = "put the relay binary on PATH (e.g. install it into ~/.local/bin)"
		return d
	}
	d.ExactText = "hooks (relay hook, via " + p.RelayBinary + ") and its transcript"
	d.MCP = "registered for each session (--mcp-config), tools mcp__relay__* allowed in the session's settings"
	d.State = "hooks (UserPromptSubmit, Stop, PermissionRequest); screen before they arrive"
	return d
}
