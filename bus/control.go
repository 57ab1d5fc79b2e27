package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// ControlSubject is where an agent's wrapper takes requests about its
// session: relay.<workspace>.control.<agent>. It is plain NATS
// request/reply (nothing is stored): a request reaches the wrapper that
// runs the agent now, or nobody.
//
// Who may ask is who may publish there: with the hub's token, anyone who
// holds it (the token is the security boundary, as for sending); with NATS
// credentials, whoever the account's permissions let publish on
// relay.<workspace>.control.<agent>. The wrapper logs who asked (By).
func ControlSubject(workspace, agent string) string {
	return "relay." + workspace + ".control." + agent
}

// The requests a wrapper takes on its ControlSubject.
const (
	// OpStop ends the session gracefully: SessionEnd hooks, their text
	// typed in, the turn it starts, then the profile's way to exit.
	OpStop = "stop"
	// OpApprove answers the permission prompt the agent waits on (Ask):
	// allowed, or denied (Deny) with Reason.
	OpApprove = "approve"
)

// Control is a request to an agent's wrapper.
type Control struct {
	Op string `json:"op"`
	// Timeout bounds the wait for the agent's last turn (stop); zero
	// means the wrapper's default.
	Timeout time.Duration `json:"timeout,omitempty"`
	// By names who asks (a person, a tool), for the wrapper's log.
	By string `json:"by,omitempty"`
	// Ask names the prompt an approve answers (Ask.ID); Deny refuses it,
	// and Reason tells the agent why.
	Ask    string `json:"ask,omitempty"`
	Deny   bool   `json:"deny,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// ControlReply is a wrapper's answer to a Control request.
type ControlReply struct {
	OK        bool   `json:"ok"`
	SessionID string `json:"session_id,omitempty"`
	Error     string `json:"error,omitempty"`
}

// ErrNotRunning means no wrapper answered on the agent's control subject:
// it is not running (or its wrapper is not connected to this hub).
var ErrNotRunning = errors.New("agent not running")

// ServeControl answers the Control requests addressed to this client's
// agent with handle, until ctx ends. handle runs on its own goroutine per
// request and must answer promptly (start long work in the background).
func (c *Client) ServeControl(ctx context.Context, handle func(Control) ControlReply) error {
	sub, err := c.nc.Subscribe(ControlSubject(c.opts.Workspace, c.opts.Name), func(m *nats.Msg) {
		var req Control
		rep := ControlReply{Error: "bad request"}
		if json.Unmarshal(m.Data, &req) == nil {
			rep = handle(req)
		}
		b, _ := json.Marshal(rep)
		_ = m.Respond(b)
	})
	if err != nil {
		return fmt.Errorf("serve control of %s: %w", c.opts.Name, err)
	}
	<-ctx.Done()
	_ = sub.Unsubscribe()
	return nil
}

// Control sends req to agent's wrapper and returns its answer;
// ErrPermission at once when this credential may not ask (an agent's own
// may not), ErrNotRunning when no wrapper answers.
func (c *Client) Control(ctx context.Context, agent string, req Control) (ControlReply, error) {
	var rep ControlReply
	if err := ValidName("agent", agent); err != nil {
		return rep, err
	}
	b, err := json.Marshal(req)
	if err != nil {
		return rep, err
	}
	subject := ControlSubject(c.opts.Workspace, agent)
	ctx, stop := c.watchPublish(ctx, subject)
	defer stop()
	m, err := c.nc.RequestWithContext(ctx, subject, b)
	if why := refused(ctx); why != nil {
		return rep, fmt.Errorf("control %s: %w", agent, why)
	}
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, context.DeadlineExceeded) {
		return rep, fmt.Errorf("%s: %w", agent, ErrNotRunning)
	}
	if err != nil {
		return rep, fmt.Errorf("control %s: %w", agent, err)
	}
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return rep, fmt.Errorf("control %s: bad answer: %w", agent, err)
	}
	if !rep.OK {
		return rep, fmt.Errorf("%s: %s", agent, rep.Error)
	}
	return rep, nil
}
