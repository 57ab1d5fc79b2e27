package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/relayhq/relay/internal/config"
)

// Set is the lifecycle hooks of one session, from `[[hooks.EVENT]]`. It is
// safe for concurrent use.
type Set struct {
	groups map[config.Event][]config.HookGroup
	opts   SetOptions
}

// SetOptions are what every hook of a session shares. The zero value runs
// hooks in relay's folder with relay's environment.
type SetOptions struct {
	// Env is the base environment (nil: relay's own).
	Env []string
	// Dir is the working folder of the hooks (usually the agent's).
	Dir string
	// Vars are added to every hook's environment, e.g. RELAY_AGENT,
	// RELAY_SESSION_ID, RELAY_WORKSPACE.
	Vars map[string]string
}

// NewSet returns the hooks of groups (as in config.Config.Hooks).
func NewSet(groups map[config.Event][]config.HookGroup, opts SetOptions) *Set {
	return &Set{groups: groups, opts: opts}
}

// Has reports whether any hook is configured for event, so that callers
// can skip building a payload for every output line.
func (s *Set) Has(event string) bool {
	ev, ok := config.ParseEvent(event)
	return ok && len(s.groups[ev]) > 0
}

// Result is the merged outcome of the hooks that ran for one event.
type Result struct {
	// Inject holds the text of every hook that gave some, in order.
	Inject []string
	// Stopped says a hook ended the chain.
	Stopped bool
	// Blocked says a hook refused the action (for MessageReceived: the
	// message is refused). Blocking ends the chain. Reason is why it was
	// refused or stopped ("stopReason").
	Blocked bool
	Reason  string
	// Message, when not nil, replaces the received message's text (the
	// last rewrite wins).
	Message *string
	// Hold says a hook asked to keep the received message queued.
	Hold bool
	// Neutralize says a hook that gave text asked for it to be typed as a
	// peer's text is (Outcome.Neutralize, or `neutralize = true` in its
	// configuration).
	Neutralize bool
	// Ran counts the hooks that ran.
	Ran int
}

// Fire runs the hooks of event whose matcher matches subject (the line for
// Output, the sender for MessageReceived, the target for MessageSent, the
// tool for ToolCall, …), one after the other in configuration order, with
// payload as JSON on stdin. A JSON object payload gets `hook_event_name`
// and `subject` added, and its top-level text, number and boolean fields
// are also set as RELAY_<FIELD> variables, beside RELAY_EVENT and
// RELAY_SUBJECT.
//
// A hook's failure (non-zero status other than 2, timeout) does not stop
// the others: Fire runs the rest and returns every failure joined, beside
// the Result of those that worked. Only a cancelled ctx ends it early.
func (s *Set) Fire(ctx context.Context, event string, subject string, payload any) (Result, error) {
	var res Result
	ev, ok := config.ParseEvent(event)
	if !ok {
		return res, fmt.Errorf("fire hooks: unknown event %q", event)
	}
	groups := s.groups[ev]
	if len(groups) == 0 {
		return res, nil
	}
	var input json.RawMessage
	var vars map[string]string
	var errs []error
	for gi, g := range groups {
		if !g.Matches(subject) {
			continue
		}
		if vars == nil {
			// Built at the first match: most output lines match nothing.
			var err error
			if input, vars, err = eventInput(ev, subject, payload); err != nil {
				return res, err
			}
			for k, v := range s.opts.Vars {
				vars[k] = v
			}
		}
		for hi, h := range g.Hooks {
			if err := ctx.Err(); err != nil {
				return res, errors.Join(append(errs, err)...)
			}
			cmd := Command{Argv: h.Command.Argv, Shell: h.Command.Shell, Dir: s.opts.Dir, Timeout: h.Timeout, Env: s.opts.Env}
			out, err := Run(ctx, cmd, input, vars)
			res.Ran++
			if err != nil {
				errs = append(errs, fmt.Errorf("%s hook %d.%d (%s, %s): %w", ev, gi+1, hi+1, h.Command, h.Source, err))
				continue
			}
			if out.Inject != "" {
				res.Inject = append(res.Inject, out.Inject)
				res.Neutralize = res.Neutralize || out.Neutralize || h.Neutralize
			}
			if out.Message != nil {
				res.Message = out.Message
			}
			res.Hold = res.Hold || out.Hold
			if out.Block {
				res.Blocked, res.Reason = true, out.Reason
				return res, errors.Join(errs...)
			}
			if out.Stop {
				// The reason ({"continue": false, "stopReason": "…"}) is
				// for the agent to read.
				res.Stopped, res.Reason = true, out.Reason
				return res, errors.Join(errs...)
			}
		}
	}
	return res, errors.Join(errs...)
}

// eventInput builds the stdin JSON and the RELAY_* variables of one event.
func eventInput(ev config.Event, subject string, payload any) (json.RawMessage, map[string]string, error) {
	vars := map[string]string{"RELAY_EVENT": string(ev), "RELAY_SUBJECT": subject}
	if payload == nil {
		payload = struct{}{}
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, nil, fmt.Errorf("fire %s hooks: encode payload: %w", ev, err)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		// Not an object: pass it on as it is.
		return raw, vars, nil
	}
	for k, v := range obj {
		var x any
		if json.Unmarshal(v, &x) != nil {
			continue
		}
		name := "RELAY_" + envName(k)
		switch t := x.(type) {
		case string:
			vars[name] = t
		case float64, bool:
			vars[name] = string(v)
		}
	}
	obj["hook_event_name"], _ = json.Marshal(string(ev))
	obj["subject"], _ = json.Marshal(subject)
	raw, err = json.Marshal(obj)
	if err != nil {
		return nil, nil, fmt.Errorf("fire %s hooks: encode payload: %w", ev, err)
	}
	vars["RELAY_EVENT"], vars["RELAY_SUBJECT"] = string(ev), subject
	return raw, vars, nil
}

// envName turns a JSON field name into an environment variable suffix:
// upper case, anything but letters and digits as '_'.
func envName(k string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, k)
}
