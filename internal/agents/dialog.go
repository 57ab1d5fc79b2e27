package agents

import (
	"github.com/relayhq/relay/internal/lazyre"
	"strconv"
	"strings"
)

// ScreenDialog is a permission dialog read off a CLI's screen (Codex, Gemini
// CLI): the prompt, and the keys that select allowing it once or refusing
// it. relay types those keys only while the screen shows that very dialog
// (Profile.Dialog reads it again under the writer's lock), never blind.
type ScreenDialog struct {
	// Ask is the prompt: the tool, its input and Detail as the dialog shows
	// them, and Options, the dialog's answers relay approve gives ("allow:
	// Yes, proceed"). Its ID is the session's to give.
	Ask Ask
	// Allow and Deny are the keys that select the dialog's option to run
	// the call once, and to refuse it.
	Allow, Deny []byte
}

// DialogOption is one numbered answer of a dialog on screen: "› 1. Yes,
// proceed (y)", "│ ● 1. Allow once │".
type DialogOption struct {
	N     int    // its number
	Label string // its text, without the shortcut
	// Key is the shortcut the dialog shows after the label, "(y)" or
	// "(esc)"; "" when it shows none.
	Key string
}

// Keys are the keys that select the option: its shortcut when the dialog
// shows one (esc: the Escape key), else its number.
func (o DialogOption) Keys() []byte {
	switch {
	case strings.EqualFold(o.Key, "esc"):
		return []byte{0x1b}
	case len(o.Key) == 1:
		return []byte(o.Key)
	}
	return []byte(strconv.Itoa(o.N))
}

// optionRow is a numbered option's row once borders and the selection mark
// are gone; optionKey its shortcut at the end.
var (
	optionRow = lazyre.New(`^(\d)\.\s+(\S.*)$`)
	optionKey = lazyre.New(`\s+\(([[:alnum:]]|esc)\)$`)
)

// DialogRow is a row of a dialog without the box around it (│ … │), its
// selection mark (› ● ❯ >) and the blanks at both ends.
func DialogRow(row string) string {
	for {
		row = strings.TrimSpace(row)
		inner, ok := strings.CutPrefix(row, "│")
		if !ok {
			break
		}
		row = strings.TrimSuffix(strings.TrimSpace(inner), "│") // and a box in a box
	}
	for _, mark := range []string{"›", "●", "❯", ">"} {
		if rest, ok := strings.CutPrefix(row, mark); ok {
			return strings.TrimSpace(rest)
		}
	}
	return row
}

// ReadOptions finds the last list of numbered options on a screen's rows,
// starting at 1 and counting up (a label wrapped to more rows is joined),
// and the index of the row of its first option; nil and -1 when there is
// none.
func ReadOptions(rows []string) ([]DialogOption, int) {
	for start := len(rows) - 1; start >= 0; start-- {
		m := optionRow().FindStringSubmatch(DialogRow(rows[start]))
		if m == nil || m[1] != "1" {
			continue
		}
		var opts []DialogOption
		for _, r := range rows[start:] {
			r = DialogRow(r)
			if r == "" || strings.Trim(r, "╰─╯") == "" {
				break
			}
			m := optionRow().FindStringSubmatch(r)
			switch {
			case m != nil && m[1] == strconv.Itoa(len(opts)+1):
				opts = append(opts, DialogOption{N: len(opts) + 1, Label: m[2]})
			case m == nil && len(opts) > 0:
				opts[len(opts)-1].Label += " " + r // a wrapped label
			default:
				return finishOptions(opts), start
			}
		}
		return finishOptions(opts), start
	}
	return nil, -1
}

// finishOptions takes each option's shortcut off its label.
func finishOptions(opts []DialogOption) []DialogOption {
	for i := range opts {
		if m := optionKey().FindStringSubmatchIndex(opts[i].Label); m != nil {
			opts[i].Key = opts[i].Label[m[2]:m[3]]
			opts[i].Label = opts[i].Label[:m[0]]
		}
	}
	return opts
}

// AllowDeny picks a dialog's options to run the call once (the first whose
// label starts with allow) and to refuse it (the first starting with deny),
// and fills in the keys and Options of d; false when it has not both.
func AllowDeny(d *ScreenDialog, opts []DialogOption, allow, deny string) bool {
	var yes, no *DialogOption
	for i := range opts {
		switch {
		case yes == nil && strings.HasPrefix(opts[i].Label, allow):
			yes = &opts[i]
		case no == nil && strings.HasPrefix(opts[i].Label, deny):
			no = &opts[i]
		}
	}
	if yes == nil || no == nil {
		return false
	}
	d.Allow, d.Deny = yes.Keys(), no.Keys()
	d.Ask.Options = []string{"allow: " + yes.Label, "deny: " + no.Label}
	return true
}
