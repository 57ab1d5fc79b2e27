package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ErrNotReached means a message did not reach the stage waited for, at
// one of its recipients at least, before the wait ended.
var ErrNotReached = errors.New("stage not reached")

// Outcome is where a message is at one recipient.
type Outcome struct {
	Agent   string
	Reached bool  // the stage waited for, or one past it
	Last    Stage // the latest stage that counts (see Entry.Status)
	// Answer is the recipient's answer, once the message was answered.
	Answer *Stage
}

// String says where the message is, e.g. "held (busy: …)".
func (o Outcome) String() string {
	s := string(o.Last.Stage)
	if o.Last.Reason != "" {
		s += " (" + o.Last.Reason + ")"
	}
	return s
}

// Waitable reports whether Await can wait for st.
func Waitable(st Status) bool {
	return st == StatusDelivered || st == StatusSeen || st == StatusAnswered
}

// errAwaited stops the log once every recipient reached the stage.
var errAwaited = errors.New("awaited")

// Await waits until the message env (as its sender stored it) has reached
// the stage want (delivered, seen or answered) at every recipient: the
// one it was sent to, or each agent a broadcast reached. It returns each
// recipient's outcome, by name, when all reached it, or when ctx ends with
// an error wrapping ErrNotReached that names the stage each is at.
func (c *Client) Await(ctx context.Context, env Envelope, want Status) ([]Outcome, error) {
	return Await(ctx, c.Log, env, want)
}

// LogFunc reads the log as Client.Log does.
type LogFunc func(ctx context.Context, o LogOptions, fn func(Entry) error) error

// Await is Client.Await on the log that log reads.
func Await(ctx context.Context, log LogFunc, env Envelope, want Status) ([]Outcome, error) {
	if !Waitable(want) {
		return nil, fmt.Errorf("await %q: want delivered, seen or answered", want)
	}
	var outs []Outcome
	since := env.Created
	if since.IsZero() {
		since = time.Now()
	}
	o := LogOptions{ID: env.ID, From: env.From, Since: since.Add(-time.Minute), Follow: true}
	err := log(ctx, o, func(e Entry) error {
		outs = outcomes(e, want)
		for _, x := range outs {
			if !x.Reached {
				return nil
			}
		}
		if len(outs) == 0 {
			return nil
		}
		return errAwaited
	})
	switch {
	case errors.Is(err, errAwaited):
		return outs, nil
	case err != nil && ctx.Err() == nil:
		return outs, fmt.Errorf("await %s of %s: %w", want, env.ID, err)
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("%w: %s not in the log", ErrNotReached, env.ID)
	}
	var not []string
	for _, x := range outs {
		if !x.Reached {
			not = append(not, x.Agent+": "+x.String())
		}
	}
	return outs, fmt.Errorf("%w: %s", ErrNotReached, strings.Join(not, "; "))
}

// outcomes returns where e is at each of its recipients, by name.
func outcomes(e Entry, want Status) []Outcome {
	var outs []Outcome
	for agent, st := range e.Status {
		x := Outcome{Agent: agent, Reached: Reached(st, want), Last: Stage{Agent: agent, Stage: st, Reason: e.Reasons[agent]}}
		for _, s := range e.StagesOf(agent) {
			if s.Stage == st {
				x.Last.At = s.At
			}
			if s.Stage == StatusAnswered && x.Answer == nil {
				a := s
				x.Answer = &a
			}
		}
		outs = append(outs, x)
	}
	slices.SortFunc(outs, func(a, b Outcome) int { return strings.Compare(a.Agent, b.Agent) })
	return outs
}
