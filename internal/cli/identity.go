package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/identity"
	"github.com/relayhq/relay/internal/session"
	"github.com/relayhq/relay/internal/termsafe"
)

// agentIdentity is the wrapped agent this command runs inside (its
// identity file, named by RELAY_AGENT_FILE), or nil outside any agent.
func agentIdentity(env *Env) (*identity.File, error) {
	f, err := identity.Read(env.getenv)
	if errors.Is(err, identity.ErrNoFile) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// useIdentity points o at the hub with the agent's own credential; it
// reports false when the file holds none (then the usual places are used).
func useIdentity(o *bus.Options, id *identity.File, f *hubFlags) bool {
	if id == nil || id.Hub == "" || id.Token == "" || f.hub != "" {
		return false
	}
	o.URL, o.Token, o.TLSPin, o.InboxPrefix = id.Hub, id.Token, id.TLSPin, id.InboxPrefix
	if f.workspace == "" {
		o.Workspace = id.Workspace
	}
	return true
}

// sendAsAgent hands a message to the wrapper of the agent this command runs
// in: it goes out as that agent, past the same loop damping as its @relay:
// lines.
func sendAsAgent(ctx context.Context, env *Env, id *identity.File, from, target, body string, asJSON bool) error {
	if from != "" && from != id.Name {
		return usagef("--from %s: inside agent %s, relay send sends as %s", from, id.Name, id.Name)
	}
	if id.Socket == "" {
		return fmt.Errorf("the wrapper of agent %s gave no socket to send through", id.Name)
	}
	payload, _ := json.Marshal(session.SendRequest{To: target, Body: body})
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := hookrpc.Call(cctx, id.Socket, hookrpc.Request{Event: session.SendEvent, Payload: payload})
	if err != nil {
		return fmt.Errorf("send as %s: its wrapper (relay wrap) does not answer: %w", id.Name, err)
	}
	var r session.SendReply
	if err := json.Unmarshal([]byte(resp.Stdout), &r); err != nil {
		return fmt.Errorf("send as %s: %s", id.Name, termsafe.Line(resp.Stdout))
	}
	if !r.Sent {
		return errors.New(r.Notice)
	}
	if r.Notice != "" {
		fmt.Fprintf(env.Stderr, "relay send: note: %s\n", termsafe.Text(r.Notice))
	}
	if asJSON {
		return json.NewEncoder(env.Stdout).Encode(r)
	}
	fmt.Fprintf(env.Stdout, "sent %s from %s to %s in workspace %s\n", termsafe.Line(r.ID), termsafe.Line(r.From), termsafe.Line(target), termsafe.Line(id.Workspace))
	return nil
}
