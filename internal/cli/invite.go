//go:build !lean

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hubdial"
	"github.com/relayhq/relay/internal/termsafe"
)

// inviteOptions are the flags of `relay invite`.
type inviteOptions struct {
	name    string
	expires time.Duration
	address string
	list    bool
	revoke  string
}

// runInvite asks the team's hub running on this machine for a leaf
// machine's ticket, lists the invited machines or revokes one.
func runInvite(ctx context.Context, env *Env, args []string) error {
	var o inviteOptions
	fs := newFlags(env, "invite", "[--name MACHINE] [--expires 24h] [--address HOST:PORT] | --list | --revoke MACHINE")
	fs.StringVar(&o.name, "name", "", "`machine` name the ticket is for (default: a new name, machine-N)")
	fs.DurationVar(&o.expires, "expires", 24*time.Hour, "the ticket must be used within this `duration`; 0 for never")
	fs.StringVar(&o.address, "address", "", "`host:port` the other machine reaches this hub's leaf listener at (default: its listen address)")
	fs.BoolVar(&o.list, "list", false, "list the invited machines")
	fs.StringVar(&o.revoke, "revoke", "", "revoke `machine`: its link is cut at once and refused afterwards")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if o.list && o.revoke != "" {
		return usagef("--list and --revoke go alone")
	}
	home, err := env.Home()
	if err != nil {
		return err
	}
	hubOpts, err := (&hubdial.Resolver{Home: home}).Options()
	if err != nil {
		return fmt.Errorf("relay invite needs the team's hub running here (relay up): %w", err)
	}
	nc, err := bus.Dial(ctx, hubOpts, "relay-invite")
	if err != nil {
		return err
	}
	defer nc.Close()
	ask := func(subj string, r hub.InviteRequest) (hub.InviteReply, error) {
		var rep hub.InviteReply
		b, _ := json.Marshal(r)
		m, err := nc.Request(subj, b, 10*time.Second)
		if err != nil {
			return rep, fmt.Errorf("ask the hub on %s: %w (is it an older relay?)", termsafe.Line(hubOpts.URL), err)
		}
		if err := json.Unmarshal(m.Data, &rep); err != nil {
			return rep, fmt.Errorf("hub's answer: %w", err)
		}
		if rep.Error != "" {
			return rep, errors.New(termsafe.Line(rep.Error))
		}
		return rep, nil
	}
	switch {
	case o.list:
		rep, err := ask(hub.ListLeavesSubject, hub.InviteRequest{})
		if err != nil {
			return err
		}
		return writeLeaves(env, rep.Leaves)
	case o.revoke != "":
		rep, err := ask(hub.RevokeLeafSubject, hub.InviteRequest{Machine: o.revoke})
		if err != nil {
			return err
		}
		if !rep.Revoked {
			return fmt.Errorf("no machine %q was invited (relay invite --list)", termsafe.Line(o.revoke))
		}
		fmt.Fprintf(env.Stdout, "machine %s revoked: its link is cut and refused from now on\n", termsafe.Line(o.revoke))
		return nil
	}
	if o.name == "" {
		rep, err := ask(hub.ListLeavesSubject, hub.InviteRequest{})
		if err != nil {
			return err
		}
		// The first machine-N not invited: inviting a name again cuts its link.
		for n := len(rep.Leaves) + 1; o.name == ""; n++ {
			o.name = fmt.Sprintf("machine-%d", n)
			if slices.ContainsFunc(rep.Leaves, func(l hub.Leaf) bool { return l.Machine == o.name }) {
				o.name = ""
			}
		}
	}
	if err := bus.ValidName("machine", o.name); err != nil {
		return usagef("%v", err)
	}
	valid := o.expires
	if valid == 0 {
		valid = -1
	}
	rep, err := ask(hub.InviteSubject, hub.InviteRequest{Machine: o.name, Valid: valid, Address: o.address})
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, rep.Ticket)
	fmt.Fprintf(env.Stderr, "on machine %s: relay up --join TICKET (the ticket is a secret: send it privately)\n", termsafe.Line(o.name))
	return nil
}

func writeLeaves(env *Env, leaves []hub.Leaf) error {
	if len(leaves) == 0 {
		fmt.Fprintln(env.Stdout, "no machines invited")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MACHINE\tLINK\tJOINED\tTICKET EXPIRES")
	for _, l := range leaves {
		link, joined, exp := "down", "never", "never"
		if l.Connected {
			link = "up"
		}
		if !l.Joined.IsZero() {
			joined = l.Joined.Local().Format(time.DateTime)
			exp = "used"
		} else if !l.Expires.IsZero() {
			exp = l.Expires.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termsafe.Line(l.Machine), link, joined, exp)
	}
	return tw.Flush()
}

// joinTicket reads --join's value: the ticket, or @FILE holding it (which
// keeps the secret out of the process list and the shell's history).
func joinTicket(v string) (*hub.Ticket, error) {
	if len(v) > 1 && v[0] == '@' {
		b, err := os.ReadFile(v[1:])
		if err != nil {
			return nil, fmt.Errorf("read ticket: %w", err)
		}
		v = string(b)
	}
	t, err := hub.ParseTicket(v)
	if err != nil {
		return nil, usagef("--join: %v", err)
	}
	return &t, nil
}

func addLeafFlags(fs *flag.FlagSet, o *upOptions) {
	fs.StringVar(&o.join, "join", "", "join the team hub of `ticket` (from relay invite, or @FILE) as a leaf: kept for later starts")
	fs.StringVar(&o.leafListen, "leaf-listen", "", "`host:port` of the listener leaf machines join (default: 127.0.0.1, the port of last time or a random one); beyond loopback needs --tls-cert")
	fs.BoolVar(&o.leave, "leave", false, "forget the team hub this hub joined: run on its own")
}

// prepareJoin records the team hub to join (or forgets it, --leave) in
// home, where the hub, started here or detached, reads it.
func prepareJoin(home string, o upOptions) (*hub.Ticket, error) {
	if o.leave && o.join != "" {
		return nil, usagef("--join and --leave go alone")
	}
	if o.leave {
		return nil, hub.Leave(home)
	}
	if o.join == "" {
		return nil, nil
	}
	t, err := joinTicket(o.join)
	if err != nil {
		return nil, err
	}
	if err := hub.SaveJoin(home, *t); err != nil {
		return nil, err
	}
	return t, nil
}

// printLeaf says what the hub is to other machines.
func printLeaf(env *Env, h *hub.Hub) {
	if t := h.Joined(); t != nil {
		link := "down (retrying every second)"
		if h.LinkUp() {
			link = "up"
		}
		fmt.Fprintf(env.Stdout, "leaf %s of the team hub %s: link %s; memory is the team hub's\n",
			termsafe.Line(t.Machine), termsafe.Line(t.URL), link)
		return
	}
	if u := h.LeafURL(); u != "" {
		fmt.Fprintf(env.Stdout, "leaf machines join on %s (relay invite --name MACHINE)\n", termsafe.Line(u))
	}
}
