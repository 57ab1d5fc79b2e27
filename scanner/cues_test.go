package scanner

import (
	"time"

	"github.com/relayhq/relay/screen"
)

// CuesFor returns, for the scanner's own tests, the cues of the profiles
// the recordings under testdata/recordings come from, as the packages
// under agents/ define them (agents/registry's tests check that those
// packages' cues find the same commands in the same recordings).
func CuesFor(profile string) (Cues, bool) {
	switch profile {
	case "":
		// Unknown: a TUI that wraps its own text, with no cues.
		return Cues{}, true
	case "generic", "shell":
		return Cues{LineBreaksEnd: true}, true
	case "claude", "claude-code":
		return Cues{
			Busy:       []string{"esc to interrupt"},
			Prompt:     "❯",
			Dialogs:    []string{"Do you want to proceed?"},
			Spinner:    "✢✳✶✻✽·*",
			CodeColors: []screen.Color{screen.PaletteColor(153)},
		}, true
	case "codex":
		return Cues{
			Busy:         []string{"esc to interrupt"},
			StateOSC:     7501,
			Prompt:       "›",
			Placeholders: []string{"Ask Codex to do anything"},
		}, true
	case "gemini":
		return Cues{
			// A resumed session loads its history under a spinner with
			// the title already "Ready"; an Enter then is lost.
			Busy:          []string{"esc to cancel", "Resuming session"},
			BusyTitles:    []string{"Working…"},
			WaitingTitles: []string{"Action Required"},
			IdleTitles:    []string{"Ready ("},
			StartQuiet:    2 * time.Second,
			Prompt:        ">*!",
			Placeholders:  []string{"Type your message or @path/to/file"},
		}, true
	}
	return Cues{}, false
}
