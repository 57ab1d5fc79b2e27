package codex

import (
	"encoding/json"
	"strings"

	"github.com/relayhq/relay/internal/agents"
)

// Codex 0.169.0's approval dialog, read off its screen:
//
//	  Would you like to run the following command?
//
//	  Reason: mark the folder
//
//	  $ touch approved.txt
//
//	› 1. Yes, proceed (y)
//	  2. Yes, and don't ask again for commands that start with `touch approved.txt` (p)
//	  3. No, and tell Codex what to do differently (esc)
//
// "y" runs the command once; Esc refuses it and ends the turn (Codex asks
// its human what to do instead, so relay then types the denial's reason).

// dialogTitle starts the question of Codex's approval dialogs.
const dialogTitle = "Would you like to "

// Dialog reads Codex's approval dialog off its screen.
func Dialog(screen string) (agents.ScreenDialog, bool) {
	rows := strings.Split(screen, "\n")
	opts, first := agents.ReadOptions(rows)
	if first < 0 {
		return agents.ScreenDialog{}, false
	}
	title := -1
	for i := first - 1; i >= 0 && title < 0; i-- {
		if r := agents.DialogRow(rows[i]); strings.HasPrefix(r, dialogTitle) && strings.HasSuffix(r, "?") {
			title = i
		}
	}
	if title < 0 {
		return agents.ScreenDialog{}, false
	}
	question := strings.TrimSuffix(strings.TrimPrefix(agents.DialogRow(rows[title]), dialogTitle), "?")
	input := map[string]string{}
	var command []string
	for _, r := range rows[title+1 : first] {
		r = agents.DialogRow(r)
		switch {
		case r == "":
			if len(command) > 0 {
				input["command"] = strings.Join(command, " ")
				command = nil
			}
		case strings.HasPrefix(r, "$ "):
			command = []string{strings.TrimPrefix(r, "$ ")}
		case len(command) > 0:
			command = append(command, r) // a command wrapped to more rows
		case strings.HasPrefix(r, "Reason: "):
			input["reason"] = strings.TrimPrefix(r, "Reason: ")
		}
	}
	if len(command) > 0 {
		input["command"] = strings.Join(command, " ")
	}
	d := agents.ScreenDialog{Ask: agents.Ask{Tool: question}}
	if question == "run the following command" {
		d.Ask.Tool = "shell"
	}
	if len(input) > 0 {
		d.Ask.Input, _ = json.Marshal(input)
		d.Ask.Detail = agents.AskDetail(d.Ask.Input)
	}
	if !agents.AllowDeny(&d, opts, "Yes, proceed", "No") {
		return agents.ScreenDialog{}, false
	}
	return d, true
}
