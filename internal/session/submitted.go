package session

import (
	"cmp"
	"time"

	"github.com/relayhq/relay/internal/agents"
)

// submitWait bounds how long delivery through the CLI's own input path
// waits, after the human submitted a line, for a sign that the CLI took it.
// An Enter that starts no turn (a command that opens a dialog) holds
// messages that long at most. OpenCode 1.18 stored the prompt 3 to 7 s
// after the Enter at loads of 2 to 15 on 2 cores.
const submitWait = 30 * time.Second

// submitHold is why a message must not go through the CLI's own input
// path now ("" when nothing holds it). OpenCode's run answers only the
// last of the prompts that reach it before it reads the conversation:
// a prompt posted while another waits for its answer, or just after the
// human's Enter, leaves one of them unanswered. So, for a Deliverer:
//   - while its record shows a prompt waiting for its answer
//     (agents.Answering), nothing is posted;
//   - after the human submitted a line, nothing is posted until the record
//     holds the human's prompt or, for a CLI without such a record, the
//     agent was seen busy since; or until submitWait passed.
//
// Typing keeps its own rules: the human's draft in the input box and
// their recent keys hold it.
func (s *Session) submitHold() string {
	d := s.deliverer()
	if d == nil {
		return ""
	}
	a, _ := d.(agents.Answering)
	if a != nil && a.Answering() {
		return "answering: a prompt waits for its answer"
	}
	in, ok := s.child.in.(interface{ LastSubmit() time.Time })
	if !ok {
		return ""
	}
	at := in.LastSubmit()
	switch {
	case at.IsZero() || time.Since(at) >= cmp.Or(s.typing.submitWait, submitWait):
		return ""
	case a != nil && a.HumanPromptSince(at):
		return ""
	case a == nil && s.typing.busyAt.Load() >= at.UnixNano():
		return "" // it took it: busy holds delivery now, or its turn is over
	}
	return "submitted: the human's prompt is not in the CLI's record yet"
}
