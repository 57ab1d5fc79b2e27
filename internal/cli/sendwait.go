package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/termsafe"
)

// sendWaitTimeout is relay send's --timeout with --wait, by default: the
// whole command, the wait for the stage included.
const sendWaitTimeout = 60 * time.Second

// parseWait reads --wait: "" (no wait), delivered, seen or answered.
func parseWait(v string) (bus.Status, error) {
	st := bus.Status(strings.ToLower(v))
	if v == "" || bus.Waitable(st) {
		return st, nil
	}
	return "", usagef("--wait %s: want delivered, seen or answered", v)
}

// awaitSent waits, within ctx, until the message e reached stage want at
// each recipient and reports it: with answered, the answer's text on
// stdout (each recipient's on a line of its own, after its name, for a
// broadcast); else a line per recipient with the stage and its time.
// When ctx ends first it returns an error naming the stage each recipient
// is at and why, e.g. "not seen within 5s: held (busy: …)".
func awaitSent(ctx context.Context, env *Env, c *bus.Client, e bus.Envelope, want bus.Status, timeout time.Duration, asJSON bool) error {
	outs, err := c.Await(ctx, e, want)
	if asJSON {
		if jerr := json.NewEncoder(env.Stdout).Encode(waitJSON(e, want, outs)); jerr != nil {
			return jerr
		}
	}
	if errors.Is(err, bus.ErrNotReached) {
		return notReached(e, want, timeout, outs)
	}
	if err != nil {
		return err
	}
	if asJSON {
		return nil
	}
	for _, x := range outs {
		switch {
		case want == bus.StatusAnswered && e.To != bus.Broadcast:
			fmt.Fprintln(env.Stdout, termsafe.Text(x.Answer.Answer))
		case want == bus.StatusAnswered:
			fmt.Fprintf(env.Stdout, "%s: %s\n", termsafe.Line(x.Agent), termsafe.Line(x.Answer.Answer))
		default:
			fmt.Fprintf(env.Stdout, "%s: %s after %s\n", termsafe.Line(x.Agent), termsafe.Line(x.String()),
				x.Last.At.Sub(e.Created).Round(time.Millisecond))
		}
	}
	return nil
}

// notReached is the error of a wait that ended before every recipient
// reached the stage.
func notReached(e bus.Envelope, want bus.Status, timeout time.Duration, outs []bus.Outcome) error {
	var not []string
	for _, x := range outs {
		if x.Reached {
			continue
		}
		if e.To == bus.Broadcast {
			not = append(not, x.Agent+": "+x.String())
		} else {
			not = append(not, x.String())
		}
	}
	if len(not) == 0 {
		not = []string{"not in the log yet"}
	}
	by := ""
	if e.To == bus.Broadcast {
		by = " by every recipient"
	}
	return fmt.Errorf("not %s within %v%s: %s (relay log --id %s)", want, timeout, by, strings.Join(not, "; "), e.ID)
}

// waitResult is relay send --wait --json's second object.
type waitResult struct {
	ID         string          `json:"id"`
	Wait       bus.Status      `json:"wait"`
	Reached    bool            `json:"reached"`
	Recipients []waitRecipient `json:"recipients"`
}

type waitRecipient struct {
	Agent   string     `json:"agent"`
	Reached bool       `json:"reached"`
	Stage   bus.Status `json:"stage"`
	Reason  string     `json:"reason,omitempty"`
	At      time.Time  `json:"at"`
	Answer  string     `json:"answer,omitempty"`
}

func waitJSON(e bus.Envelope, want bus.Status, outs []bus.Outcome) waitResult {
	r := waitResult{ID: e.ID, Wait: want, Reached: len(outs) > 0, Recipients: []waitRecipient{}}
	for _, x := range outs {
		w := waitRecipient{Agent: x.Agent, Reached: x.Reached, Stage: x.Last.Stage, Reason: x.Last.Reason, At: x.Last.At}
		if x.Answer != nil {
			w.Answer = x.Answer.Answer
		}
		r.Reached = r.Reached && x.Reached
		r.Recipients = append(r.Recipients, w)
	}
	return r
}

// formatStages is relay log --id's lines under the message: each stage at
// each recipient, in order, with its time and the time since it was sent.
func formatStages(e bus.Entry) string {
	var b strings.Builder
	for _, s := range e.Stages {
		line := fmt.Sprintf("    %s  %-9s  %s  +%s", s.At.Local().Format("15:04:05.000"), s.Stage, s.Agent, s.At.Sub(e.Created).Round(time.Millisecond))
		if s.Reason != "" {
			line += "  (" + s.Reason + ")"
		}
		if s.Answer != "" {
			line += "  " + s.Answer
		}
		b.WriteString(termsafe.Line(line) + "\n")
	}
	return b.String()
}
