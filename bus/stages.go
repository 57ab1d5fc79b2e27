package bus

import (
	"slices"
	"time"
)

// Stage is one step of a message at one recipient, with its time: queued
// (stored in the recipient's inbox), held, stuck, delivered, seen,
// answered or failed, as its receipts report them.
type Stage struct {
	Agent  string    `json:"agent"` // the recipient
	Stage  Status    `json:"stage"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason,omitempty"`
	// Answer is the answer's text, for the stage answered; AnswerID its id.
	Answer   string `json:"answer,omitempty"`
	AnswerID string `json:"answer_id,omitempty"`
}

// progress ranks the statuses a message goes through at one recipient:
// a later receipt of a lower rank (a delivered receipt said again after a
// redelivery, a held one racing the delivery) does not undo a higher one.
// Failed ranks lowest, and is undone by any later progress (a retry).
func progress(st Status) int {
	switch st {
	case StatusQueued:
		return 0
	case StatusHeld, StatusStuck:
		return 1
	case StatusDelivered:
		return 2
	case StatusSeen:
		return 3
	case StatusAnswered:
		return 4
	}
	return -1 // failed, or unknown
}

// Reached reports whether a recipient whose latest status is st has gone
// as far as want (delivered, seen or answered).
func Reached(st, want Status) bool {
	return progress(st) >= progress(want) && progress(want) >= 0
}

// addStage records stage s of e and updates e's latest status at the
// recipient. A repeat of a stage already recorded (the same status and
// reason: a receipt said again after a redelivery) is not recorded twice.
func (e *Entry) addStage(s Stage) {
	if s.Stage == StatusConfirmed {
		s.Stage = StatusSeen // an older relay's name for it
	}
	if !slices.ContainsFunc(e.Stages, func(o Stage) bool {
		return o.Agent == s.Agent && o.Stage == s.Stage && o.Reason == s.Reason
	}) {
		e.Stages = append(e.Stages, s)
	}
	cur, ok := e.Status[s.Agent]
	if ok && s.Stage != StatusFailed && progress(s.Stage) < progress(cur) {
		return
	}
	e.Status[s.Agent] = s.Stage
	if s.Reason != "" {
		if e.Reasons == nil {
			e.Reasons = map[string]string{}
		}
		e.Reasons[s.Agent] = s.Reason
	} else {
		delete(e.Reasons, s.Agent)
	}
}

// StagesOf returns the stages of e at recipient agent, in order.
func (e *Entry) StagesOf(agent string) []Stage {
	var out []Stage
	for _, s := range e.Stages {
		if s.Agent == agent {
			out = append(out, s)
		}
	}
	return out
}
