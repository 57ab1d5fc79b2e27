package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/delivery"
)

// hopMemory is how long a message from a peer counts as the cause of the
// next message to that peer (for the hop limit), as in a wrapped session.
const hopMemory = 10 * time.Minute

// Limits of the history tools.
const (
	defaultLogN = 20
	maxLogN     = 200
)

// SendInput is the send tool's arguments.
type SendInput struct {
	To       string `json:"to" jsonschema:"the agent's name, or * for every other agent of the workspace"`
	Message  string `json:"message" jsonschema:"the message, delivered word for word"`
	Wait     string `json:"wait,omitempty" jsonschema:"wait until every recipient reached this stage: delivered (typed in), seen (its model was given it) or answered (it wrote back to you; its answer is returned)"`
	TimeoutS int    `json:"timeout_s,omitempty" jsonschema:"how long to wait, in seconds (default 60)"`
}

// NoInput is the arguments of a tool that takes none.
type NoInput struct{}

// InboxInput is the inbox tool's arguments.
type InboxInput struct {
	N int `json:"n,omitempty" jsonschema:"how many of the latest messages (default 20)"`
}

// LogInput is the log tool's arguments.
type LogInput struct {
	N    int    `json:"n,omitempty" jsonschema:"how many of the latest messages (default 20)"`
	With string `json:"with,omitempty" jsonschema:"only the messages between you and this agent"`
}

func (s *Server) addMessageTools() {
	addTool(s, "send", "Send a message to one agent of the team, or to all (to = *); returns its id and delivery status. With wait (delivered, seen or answered) it waits, up to timeout_s, for that stage at every recipient and returns it, with the answer's text for answered.", s.send)
	addTool(s, "agents", "List the agents of the team: name, CLI, state (idle, busy, offline) and pending messages.", s.agents)
	addTool(s, "inbox", "Show the latest messages sent to you, with their delivery status.", s.inbox)
	addTool(s, "log", "Show the latest messages from and to you (optionally only with one agent), with delivery status.", s.log)
}

func (s *Server) send(ctx context.Context, in SendInput) (string, error) {
	want := bus.Status(strings.ToLower(strings.TrimSpace(in.Wait)))
	if want != "" && !bus.Waitable(want) {
		return "", fmt.Errorf("wait %q: want delivered, seen or answered", in.Wait)
	}
	if in.TimeoutS < 0 || in.TimeoutS > maxWaitS {
		return "", fmt.Errorf("timeout_s %d: want 1 to %d seconds", in.TimeoutS, maxWaitS)
	}
	to := strings.TrimSpace(in.To)
	if to == "" {
		return "", fmt.Errorf("no recipient: give an agent's name, or * for everyone")
	}
	if to != bus.Broadcast {
		if err := bus.ValidName("recipient", to); err != nil {
			return "", err
		}
	}
	if strings.TrimSpace(in.Message) == "" {
		return "", fmt.Errorf("the message is empty")
	}
	if len(in.Message) > bus.MaxBody {
		return "", fmt.Errorf("the message is %d bytes; the limit is %d", len(in.Message), bus.MaxBody)
	}
	if strings.EqualFold(to, s.o.Name) {
		return "", fmt.Errorf("not sent: %s is you", to)
	}
	t, err := s.connect(ctx)
	if err != nil {
		return "", err
	}
	msg := bus.Message{To: to, Body: in.Message}
	if last, ok := s.lastFrom(ctx, t.Bus, to); ok {
		msg.Hops, msg.ReplyTo = last.Hops+1, last.ID
	}
	if v := s.damper.Check(s.o.Now(), s.o.Name, to, msg.Hops); !v.OK {
		s.o.Logger.Warn("message held", "to", to, "why", v.Why, "quiet", v.Quiet)
		if !v.Quiet { // shown in relay log with the status held, in no inbox
			if _, err := t.Bus.Hold(ctx, msg, v.Why); err != nil {
				s.o.Logger.Warn("record held message", "err", err)
			}
		}
		return "", fmt.Errorf("not sent to %s (%s); wait, or ask the human", to, v.Why)
	}
	env, err := t.Bus.SendMessage(ctx, msg)
	note := ""
	switch {
	case errors.Is(err, bus.ErrUnknownAgent):
		note = fmt.Sprintf(" No agent named %s has joined workspace %s yet; the message waits in case it does.", to, t.Bus.Workspace())
	case errors.Is(err, bus.ErrNoRecipients):
		return "", fmt.Errorf("not sent: no other agent is in the workspace")
	case err != nil:
		s.drop(err)
		return "", fmt.Errorf("not sent to %s: %w", to, err)
	}
	if want != "" {
		return fmt.Sprintf("Sent to %s as message %s; %s%s", to, env.ID, s.await(ctx, t.Bus, env, want, in.TimeoutS), note), nil
	}
	return fmt.Sprintf("Sent to %s as message %s; status: %s.%s", to, env.ID, s.status(ctx, t.Bus, env), note), nil
}

// maxWaitS bounds the send tool's timeout_s; defaultWaitS is its default.
const (
	maxWaitS     = 600
	defaultWaitS = 60
)

// await waits up to timeoutS seconds for env to reach want at every
// recipient and says where it got: each recipient's stage, and its answer
// when answered.
func (s *Server) await(ctx context.Context, b Bus, env bus.Envelope, want bus.Status, timeoutS int) string {
	if timeoutS == 0 {
		timeoutS = defaultWaitS
	}
	wctx, cancel := context.WithTimeout(ctx, time.Duration(timeoutS)*time.Second)
	defer cancel()
	outs, err := bus.Await(wctx, b.Log, env, want)
	var parts []string
	for _, x := range outs {
		p := x.Agent + " " + x.String()
		if x.Answer != nil && want == bus.StatusAnswered {
			p = fmt.Sprintf("%s answered (message %s): %s", x.Agent, x.Answer.AnswerID, x.Answer.Answer)
		}
		parts = append(parts, p)
	}
	switch {
	case errors.Is(err, bus.ErrNotReached):
		return fmt.Sprintf("not %s within %ds: %s.", want, timeoutS, strings.Join(parts, "; "))
	case err != nil:
		return fmt.Sprintf("could not wait for %s: %v.", want, err)
	}
	return fmt.Sprintf("%s: %s.", want, strings.Join(parts, "; "))
}

// lastFrom finds the latest message from peer to this identity within
// hopMemory: the message that one answers (for the hop count).
func (s *Server) lastFrom(ctx context.Context, b Bus, peer string) (bus.Entry, bool) {
	if peer == bus.Broadcast {
		return bus.Entry{}, false
	}
	var last bus.Entry
	var ok bool
	err := b.Log(ctx, bus.LogOptions{Agent: s.o.Name, Last: 50, Since: s.o.Now().Add(-hopMemory)}, func(e bus.Entry) error {
		if strings.EqualFold(e.From, peer) && e.Invalid == "" && (e.To == s.o.Name || e.To == bus.Broadcast) {
			last, ok = e, true
		}
		return nil
	})
	if err != nil {
		s.o.Logger.Debug("read log for hops", "err", err)
	}
	return last, ok
}

// status is a message's delivery status so far at each recipient.
func (s *Server) status(ctx context.Context, b Bus, env bus.Envelope) string {
	var st string
	err := b.Log(ctx, bus.LogOptions{ID: env.ID, From: env.From, Last: 1}, func(e bus.Entry) error {
		st = statuses(e)
		return nil
	})
	if err != nil || st == "" {
		return string(bus.StatusQueued)
	}
	return st
}

// statuses shows an entry's status per recipient: "bob queued, carol
// delivered".
func statuses(e bus.Entry) string {
	names := make([]string, 0, len(e.Status))
	for n := range e.Status {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		p := n + " " + string(e.Status[n])
		if r := e.Reasons[n]; r != "" {
			p += " (" + r + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

func (s *Server) agents(ctx context.Context, _ NoInput) (string, error) {
	t, err := s.connect(ctx)
	if err != nil {
		return "", err
	}
	list, err := t.Bus.Agents(ctx)
	if err != nil {
		s.drop(err)
		return "", fmt.Errorf("list agents: %w", err)
	}
	if len(list) == 0 {
		return fmt.Sprintf("No agents in workspace %s.", t.Bus.Workspace()), nil
	}
	now := s.o.Now()
	var b strings.Builder
	fmt.Fprintf(&b, "Agents of workspace %s:\n", t.Bus.Workspace())
	for _, a := range list {
		cli := a.CLI
		if cli == "" {
			cli = "unknown CLI"
		}
		you := ""
		if a.Name == s.o.Name {
			you = " (you)"
		}
		fmt.Fprintf(&b, "- %s%s: %s, %s for %s, %d pending\n", a.Name, you, cli, a.State, now.Sub(a.Since).Round(time.Second), a.Pending)
	}
	return delivery.Sanitize(strings.TrimRight(b.String(), "\n")), nil
}

func (s *Server) inbox(ctx context.Context, in InboxInput) (string, error) {
	n, err := count(in.N)
	if err != nil {
		return "", err
	}
	return s.history(ctx, n, func(e bus.Entry) bool {
		return e.From != s.o.Name && (e.To == s.o.Name || e.To == bus.Broadcast)
	}, "No messages to you yet.")
}

func (s *Server) log(ctx context.Context, in LogInput) (string, error) {
	n, err := count(in.N)
	if err != nil {
		return "", err
	}
	with := strings.TrimSpace(in.With)
	if with != "" {
		if err := bus.ValidName("with", with); err != nil {
			return "", err
		}
	}
	return s.history(ctx, n, func(e bus.Entry) bool {
		if with == "" {
			return true
		}
		return (e.From == with && (e.To == s.o.Name || e.To == bus.Broadcast)) || (e.From == s.o.Name && e.To == with)
	}, "No messages yet.")
}

// count checks a tool's n.
func count(n int) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("n is %d: want a number of messages, 1 or more", n)
	case n == 0:
		return defaultLogN, nil
	}
	return min(n, maxLogN), nil
}

// history shows the last n messages from and to this identity that keep
// accepts, oldest first, one per paragraph.
func (s *Server) history(ctx context.Context, n int, keep func(bus.Entry) bool, none string) (string, error) {
	t, err := s.connect(ctx)
	if err != nil {
		return "", err
	}
	var got []bus.Entry
	err = t.Bus.Log(ctx, bus.LogOptions{Agent: s.o.Name, Last: 4 * n}, func(e bus.Entry) error {
		if keep(e) {
			got = append(got, e)
		}
		return nil
	})
	if err != nil {
		s.drop(err)
		return "", fmt.Errorf("read the log: %w", err)
	}
	if len(got) == 0 {
		return none, nil
	}
	if len(got) > n {
		got = got[len(got)-n:]
	}
	var b strings.Builder
	for i, e := range got {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(formatEntry(e))
	}
	// Every body came from someone else: shown, never obeyed.
	return delivery.Sanitize(b.String()), nil
}

// formatEntry is one message of inbox and log: a header line, then the
// body.
func formatEntry(e bus.Entry) string {
	when := e.Created.UTC().Format("2006-01-02 15:04:05Z")
	body := e.Body
	if e.Invalid != "" {
		body = "(rejected: " + e.Invalid + ")"
	}
	return fmt.Sprintf("[%s] %s %s -> %s (%s):\n%s\n", e.ID, when, e.From, e.To, statuses(e), body)
}

// drop forgets the hub connection after an error that may mean it is
// gone, so that the next call connects again.
func (s *Server) drop(err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.team != nil && s.team.Bus != nil {
		s.team.Bus.Close()
	}
	s.team = nil
}
