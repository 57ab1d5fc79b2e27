package agents

import (
	"encoding/json"
	"errors"
	"strings"
)

// Ask is a question an agent's CLI puts to its human and waits on: a tool
// permission dialog.
type Ask struct {
	// ID names this prompt among the agent's: an answer names the prompt
	// it answers, so that it never lands on a later one.
	ID   string `json:"id"`
	Tool string `json:"tool,omitempty"` // the tool asked for (Bash, Edit, …)
	// Input is the tool's input as the CLI gives it (JSON), and Detail what
	// the human is asked about in a line: the command, the file, the URL.
	Input   json.RawMessage `json:"input,omitempty"`
	Detail  string          `json:"detail,omitempty"`
	Options []string        `json:"options,omitempty"` // the answers relay can give
}

// Summary is the ask in a few words, for people: "Bash: touch marker".
func (a Ask) Summary() string {
	switch {
	case a.Tool != "" && a.Detail != "":
		return a.Tool + ": " + a.Detail
	case a.Tool != "":
		return a.Tool
	}
	return a.Detail
}

// ErrNoAsk means the prompt an answer names is not waiting (any more).
var ErrNoAsk = errors.New("no such prompt waits")

// Answerer is a Source that can answer its CLI's permission prompts itself
// (Claude Code: the PermissionRequest hook's decision), without keys.
type Answerer interface {
	// Answer answers the prompt id: allow it, or deny it with reason
	// (which reaches the model). ErrNoAsk when it does not wait.
	Answer(id string, allow bool, reason string) error
	// Dismiss tells the source that its CLI's dialog is gone from the
	// screen (the human answered it there): its prompts wait no more.
	Dismiss()
}

// maxDetail caps Ask.Detail.
const maxDetail = 300

// AskDetail is what a tool call with input asks the human about, in a
// line: the command of a shell tool, the file of an edit, the URL of a
// fetch, else the input's JSON; cut to 300 bytes.
func AskDetail(input json.RawMessage) string {
	var fields map[string]any
	d := strings.TrimSpace(string(input))
	if json.Unmarshal(input, &fields) == nil {
		for _, k := range []string{"command", "cmd", "file_path", "path", "url", "pattern"} {
			if v, ok := fields[k].(string); ok && v != "" {
				d = v
				break
			}
			if v, ok := fields[k].([]any); ok && len(v) > 0 {
				parts := make([]string, 0, len(v))
				for _, p := range v {
					if s, ok := p.(string); ok {
						parts = append(parts, s)
					}
				}
				d = strings.Join(parts, " ")
				break
			}
		}
	}
	d = strings.Join(strings.Fields(d), " ")
	if len(d) > maxDetail {
		cut := maxDetail
		for cut > 0 && d[cut]&0xC0 == 0x80 {
			cut--
		}
		d = d[:cut] + "…"
	}
	return d
}
