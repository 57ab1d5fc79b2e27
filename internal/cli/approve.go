package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/termsafe"
)

// runApprovals is `relay approvals [--json]`: the prompts the workspace's
// blocked agents wait on, from their presence.
func runApprovals(ctx context.Context, env *Env, args []string) error {
	var hf hubFlags
	var asJSON bool
	fs := newFlags(env, "approvals", "[--json]\n\nLists the permission prompts the team's agents wait on: the agent, the tool, what it\nwould do (the command, the file), the answers relay approve can give, and since when.")
	addHubFlags(fs, &hf)
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per prompt")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	c, err := connectBus(ctx, env, &hf, "", false)
	if err != nil {
		return err
	}
	defer c.Close()
	list, err := c.Approvals(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(env.Stdout)
		for _, a := range list {
			if err := enc.Encode(a); err != nil {
				return err
			}
		}
		return nil
	}
	if len(list) == 0 {
		fmt.Fprintf(env.Stdout, "no prompts wait in workspace %s\n", termsafe.Line(c.Workspace()))
		return nil
	}
	return writeApprovals(env.Stdout, time.Now(), list)
}

// writeApprovals prints the table of pending prompts. The fields come from
// presence records: shown, never obeyed, and made safe for the terminal.
func writeApprovals(w io.Writer, now time.Time, list []bus.Approval) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tTOOL\tINPUT\tOPTIONS\tSINCE")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termsafe.Line(a.Agent), termsafe.Line(a.Tool), termsafe.Line(clip(a.Detail, 80)),
			termsafe.Line(strings.Join(a.Options, ",")), ago(now, a.Since))
	}
	return tw.Flush()
}

// askSummary is a prompt in a few words, cut to n bytes.
func askSummary(a bus.Ask, n int) string {
	s := a.Tool
	if a.Detail != "" {
		s += ": " + a.Detail
	}
	return clip(s, n)
}

// clip cuts s to n bytes at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// approveOptions are the parsed flags of `relay approve`.
type approveOptions struct {
	hub    hubFlags
	name   string
	deny   bool
	reason string
}

func parseApprove(env *Env, args []string) (*approveOptions, error) {
	o := &approveOptions{}
	fs := newFlags(env, "approve", "[--deny] [--reason TEXT] NAME\n\nAnswers the permission prompt agent NAME waits on (see relay approvals): allows the tool\ncall, or with --deny refuses it and tells the model --reason. Only a human's credential\n(the workspace token) may answer: inside a wrapped agent relay acts as that agent, and\nthe hub refuses.")
	addHubFlags(fs, &o.hub)
	fs.BoolVar(&o.deny, "deny", false, "refuse the tool call")
	fs.StringVar(&o.reason, "reason", "", "with --deny, why (the model reads it)")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	rest := fs.Args()
	for len(rest) > 0 {
		if o.name != "" {
			return nil, usagef("want one agent name, have %q and %q", o.name, rest[0])
		}
		o.name = rest[0]
		if err := parseFlags(fs, rest[1:]); err != nil { // flags after the name
			return nil, err
		}
		rest = fs.Args()
	}
	if o.name == "" {
		return nil, usagef("want one agent name, e.g. relay approve Alice")
	}
	if err := bus.ValidName("agent", o.name); err != nil {
		return nil, usagef("%v", err)
	}
	if o.reason != "" && !o.deny {
		return nil, usagef("--reason goes with --deny")
	}
	return o, nil
}

// ErrNoPrompt is returned by relay approve when the agent waits on no
// prompt.
var ErrNoPrompt = errors.New("no permission prompt waits")

// runApprove is `relay approve NAME`: an approve request, naming the
// prompt the hub lists for NAME, on the agent's control subject.
func runApprove(ctx context.Context, env *Env, args []string) error {
	o, err := parseApprove(env, args)
	if err != nil {
		return err
	}
	c, err := connectBus(ctx, env, &o.hub, "", false)
	if err != nil {
		return err
	}
	defer c.Close()
	list, err := c.Approvals(ctx)
	if err != nil {
		return err
	}
	var ask *bus.Ask
	for _, a := range list {
		if a.Agent == o.name {
			ask = &a.Ask
		}
	}
	if ask == nil {
		return fmt.Errorf("%s: %w (see relay approvals)", o.name, ErrNoPrompt)
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err = c.Control(rctx, o.name, bus.Control{Op: bus.OpApprove, Ask: ask.ID, Deny: o.deny, Reason: o.reason, By: defaultSender(env)})
	cancel()
	if errors.Is(err, bus.ErrPermission) {
		why := "this credential may not answer prompts"
		if id, _ := agentIdentity(env); id != nil && o.hub.hub == "" {
			why = fmt.Sprintf("inside agent %s, relay acts with %s's own credential; only a human answers prompts: run relay approve from your own shell", id.Name, id.Name)
		}
		return fmt.Errorf("%s: refused: %s (%w)", o.name, why, err)
	}
	if errors.Is(err, bus.ErrNotRunning) {
		return fmt.Errorf("%w: no wrapper of %s answers in workspace %s (see relay agents)", err, o.name, c.Workspace())
	}
	if err != nil {
		return err
	}
	verb := "allowed"
	if o.deny {
		verb = "denied"
	}
	fmt.Fprintf(env.Stdout, "%s: %s %s\n", o.name, verb, termsafe.Line(askSummary(*ask, 120)))
	return nil
}
