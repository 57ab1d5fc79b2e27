package scanner

import (
	"time"

	"github.com/relayhq/relay/internal/screen"
)

// DefaultQuietTime is how long rows must stay unchanged before they are
// final and the agent counts as idle, when a profile does not say.
const DefaultQuietTime = 500 * time.Millisecond

// Cues are what one agent CLI shows on screen about itself: how it says it
// is working, where its input box is, how it draws code. Profiles (the
// packages under agents/) fill them; the zero value is a TUI with no cues.
type Cues struct {
	// Busy holds texts that, anywhere on screen, mean the agent is working
	// (Claude Code and Codex: "esc to interrupt"; Gemini: "esc to cancel").
	Busy []string
	// Prompt holds the glyphs that start the input row, any one of them
	// ("❯"; "›"; Gemini CLI: ">*!" for its normal, YOLO and shell modes).
	// The last row starting with one is the input box: it and the rows
	// below it are the TUI's own and never fire. Empty: no input box.
	Prompt string
	// PromptModes are words that may stand before the prompt glyph on the
	// input row, for a CLI that shows its mode there (aider: "ask> ",
	// "architect multi> "). Each is a whole word followed by a space or
	// the glyph.
	PromptModes []string
	// InputFrame says the Prompt glyph is the left edge of a framed input
	// box of several rows (OpenCode: "┃" on each row, its last row the
	// agent and model line): the box is the last run of consecutive rows
	// starting with the glyph, the draft is the text of its rows but the
	// last, and the box and the rows below it are the TUI's own.
	InputFrame bool
	// InputHistory says the CLI leaves each input the human submitted on
	// screen, on a row starting with its prompt (aider): every such row,
	// not only the input box, is the human's; it ends a body and never
	// fires.
	InputHistory bool
	// StateOSC is the number of an OSC sequence in which the CLI reports
	// its state as "state=working", "state=idle", "state=done" (Codex:
	// 7501): an exact busy cue, beside the texts in Busy, and an exact idle
	// one (idle at once, without QuietTime). Zero: none.
	StateOSC int
	// BusyTitles are texts that, in the window title (OSC 0/2), mean the
	// agent is working (Gemini CLI: "Working…").
	BusyTitles []string
	// WaitingTitles are texts that, in the window title, mean the agent
	// waits on its human, e.g. to approve a tool call (Gemini CLI: "Action
	// Required"): busy, and State.Waiting.
	WaitingTitles []string
	// Dialogs are texts that, on a row of the screen, mean a dialog waits
	// for the human's answer (Claude Code: "Do you want to proceed?"):
	// State.Waiting, so nothing is typed into it, and the end of the wait
	// as soon as no row shows one (the human answered).
	Dialogs []string
	// IdleTitles are texts that, in the window title, mean the agent's turn
	// is over (Gemini CLI: "Ready"): without a busy cue it is idle at once,
	// without waiting out QuietTime.
	IdleTitles []string
	// PasteMode says the CLI reads its input box only once it turned on
	// bracketed paste: until its first idle moment it is busy while the
	// mode is off, its box drawn or not. Gemini CLI 0.61 under load drew
	// its box seconds before it turned the mode on and took input; what
	// relay typed then stayed unshown and was lost or merged.
	PasteMode bool
	// Placeholders are texts an empty input box shows (Codex: "Ask Codex to
	// do anything"); they are not a draft. Faint text is never a draft
	// either.
	Placeholders []string
	// Spinner holds the glyphs that start the TUI's status row while it
	// works (Claude Code: "✢✳✶✻✽·*"); such a row with an ellipsis is not
	// part of the reply.
	Spinner string
	// CodeColors are the foreground colours of code blocks (Claude Code:
	// palette 153). Rows drawn in them never fire.
	CodeColors []screen.Color
	// QuietTime is how long rows must stay unchanged to be final, and the
	// screen to be idle when the CLI does not say so itself (StateOSC,
	// IdleTitles); zero means DefaultQuietTime.
	QuietTime time.Duration
	// StartQuiet, when longer than QuietTime, is how long the screen must
	// stay unchanged, with the input box drawn, before the agent first
	// counts as idle: Gemini CLI started with --resume draws its input
	// box, then about 0.6 s later loads the session and drops any Enter
	// typed meanwhile.
	StartQuiet time.Duration
	// WrapSlack is how many columns short of the right edge a TUI may break
	// a line when it wraps words itself (the rule that keeps a mid-line
	// mention wrapped to a row start from firing); zero means 2.
	WrapSlack int
	// LineBreaksEnd says the program does not wrap its own text (a plain
	// shell, a script): every line break it writes ends a command's body,
	// only the terminal's soft wraps continue a line, and a line is final as
	// soon as the cursor has left it (the next prompt may follow at once).
	LineBreaksEnd bool
}

// withDefaults fills in the zero fields.
func (c Cues) withDefaults() Cues {
	if c.QuietTime <= 0 {
		c.QuietTime = DefaultQuietTime
	}
	if c.WrapSlack <= 0 {
		c.WrapSlack = 2
	}
	return c
}
