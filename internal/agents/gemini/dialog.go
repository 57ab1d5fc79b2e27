package gemini

import (
	"encoding/json"
	"strings"

	"github.com/relayhq/relay/internal/agents"
)

// Gemini CLI 0.61.0's tool approval dialog, read off its screen (its window
// title says "Action Required" meanwhile):
//
//	╭──────────────────────────────────────────╮
//	│ ? Shell  touch approved.txt              │
//	│ ╭──────────────────────────────────────╮ │
//	│ │ touch approved.txt                   │ │
//	│ ╰──────────────────────────────────────╯ │
//	│ Allow execution of [Shell]?              │
//	│                                          │
//	│ ● 1. Allow once                          │
//	│   2. Allow for this session              │
//	│   3. No, suggest changes (esc)           │
//	╰──────────────────────────────────────────╯
//
// "1" runs the call once; Esc refuses it and cancels the turn ("Request
// cancelled."), so relay then types the denial's reason.

// Dialog reads Gemini CLI's tool approval dialog off its screen.
func Dialog(screen string) (agents.ScreenDialog, bool) {
	rows := strings.Split(screen, "\n")
	opts, first := agents.ReadOptions(rows)
	if first < 0 {
		return agents.ScreenDialog{}, false
	}
	header := -1
	for i := first - 1; i >= 0 && header < 0; i-- {
		if strings.HasPrefix(agents.DialogRow(rows[i]), "? ") {
			header = i
		}
	}
	if header < 0 {
		return agents.ScreenDialog{}, false
	}
	h := strings.TrimPrefix(agents.DialogRow(rows[header]), "? ")
	tool, desc, _ := strings.Cut(h, "  ")
	d := agents.ScreenDialog{Ask: agents.Ask{Tool: strings.TrimSpace(tool), Detail: strings.TrimSpace(desc)}}
	// A shell call shows its command in a box of its own, above the
	// question "Allow execution of […]?".
	var command []string
	question := false
	for _, r := range rows[header+1 : first] {
		r = agents.DialogRow(r)
		switch {
		case strings.HasPrefix(r, "Allow execution of"):
			question = true
		case r == "" || strings.Trim(r, "╭─╮╰╯") == "":
		case !question:
			command = append(command, r)
		}
	}
	if question && len(command) > 0 {
		d.Ask.Input, _ = json.Marshal(map[string]string{"command": strings.Join(command, " ")})
		d.Ask.Detail = agents.AskDetail(d.Ask.Input)
	} else if d.Ask.Detail != "" {
		d.Ask.Input, _ = json.Marshal(map[string]string{"description": d.Ask.Detail})
	}
	if !agents.AllowDeny(&d, opts, "Allow once", "No") {
		return agents.ScreenDialog{}, false
	}
	return d, true
}
