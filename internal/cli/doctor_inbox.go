//go:build !lean

package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/termsafe"
)

// stallGrace is how long doctor watches an inbox whose messages no pull
// asks for before it calls it stalled: a wrapper's pull ends and is made
// again every 10 s (and after a missed heartbeat), so one look may fall
// between two.
const stallGrace = 3 * time.Second

// checkInboxes checks the inbox of every live agent of o's workspace: its
// consumer is on the hub, a wrapper's pull takes its messages, and no
// message has waited longer than the agent's stuck_after to be typed. One
// failed check per agent that has a problem, or one passed check.
func checkInboxes(ctx context.Context, o bus.Options) []doctorCheck {
	cctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	o.Name, o.Human = "", false
	c, err := bus.Connect(cctx, o)
	if err != nil {
		return []doctorCheck{{Name: "inboxes", Detail: "not checked: " + err.Error(), Skipped: true}}
	}
	defer c.Close()
	agents, err := c.Agents(cctx)
	if err != nil {
		return []doctorCheck{{Name: "inboxes", Detail: "not checked: " + err.Error(), Skipped: true}}
	}
	var bad, revoked []doctorCheck
	live := 0
	for _, a := range agents {
		if !a.Revoked.IsZero() {
			name := termsafe.Line(a.Name)
			revoked = append(revoked, doctorCheck{Name: "agent " + name, OK: true,
				Detail: fmt.Sprintf("%s's credentials were revoked %s: it is cut off until its wrapper starts again with new ones (relay creds issue %s)",
					name, ago(time.Now(), a.Revoked), name)})
		}
		if a.State == bus.StateOffline {
			continue
		}
		live++
		if ck, ok := checkInbox(ctx, c, a); !ok {
			bad = append(bad, ck)
		}
	}
	if len(bad) > 0 {
		return append(bad, revoked...)
	}
	return append([]doctorCheck{{Name: "inboxes", OK: true, Detail: fmt.Sprintf("%d live agent(s) in workspace %s, every inbox served", live, c.Workspace())}}, revoked...)
}

// checkInbox checks one live agent's inbox.
func checkInbox(ctx context.Context, c *bus.Client, a bus.Presence) (doctorCheck, bool) {
	name := termsafe.Line(a.Name)
	ck := doctorCheck{Name: "inbox " + name}
	restart := fmt.Sprintf("if it stays so, restart the agent: `relay stop %s`, then `relay wrap --name %s …` again (its messages wait in its inbox)", name, name)
	if a.State == bus.StateStuck {
		ck.Detail = fmt.Sprintf("%s is stuck: its oldest message waited %s to be typed (%s)", name, age(time.Now(), a.WaitingSince), termsafe.Line(a.StuckReason))
		ck.Fix = fmt.Sprintf("look at %s's terminal: let its turn end or interrupt it, finish the human's line, or end the hook that holds the message; `relay log --agent %s` shows what waits", name, name)
		return ck, false
	}
	deadline := time.Now().Add(stallGrace)
	for {
		ictx, cancel := context.WithTimeout(ctx, doctorTimeout)
		h, err := c.InboxOf(ictx, a.Name)
		cancel()
		switch {
		case err != nil:
			ck.OK, ck.Skipped, ck.Detail = false, true, "not checked: "+err.Error()
			return ck, true
		case !h.Consumer:
			ck.Detail = fmt.Sprintf("%s is %s but its inbox has no consumer on the hub: nothing reaches it", name, a.State)
			ck.Fix = "its wrapper makes the inbox again within seconds; " + restart
		case h.Stalled():
			ck.Detail = fmt.Sprintf("%s's inbox holds %d message(s) that no wrapper asks for (stalled)", name, h.Pending)
			ck.Fix = "its wrapper rebuilds a stalled inbox within seconds; " + restart
		default:
			return ck, true
		}
		if time.Now().After(deadline) {
			return ck, false
		}
		select {
		case <-ctx.Done():
			return ck, false
		case <-time.After(250 * time.Millisecond):
		}
	}
}
