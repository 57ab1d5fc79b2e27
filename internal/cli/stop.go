package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/relayhq/relay/bus"
)

// stopOptions are the parsed flags of `relay stop`.
type stopOptions struct {
	hub     hubFlags
	name    string
	timeout time.Duration
}

// stopExitGrace is how long, past --timeout, relay stop waits for the agent
// to go: its profile's exit command, then SIGTERM, then SIGKILL, 10 s each.
const stopExitGrace = 35 * time.Second

// defaultStopTimeout is --timeout's default (session.DefaultStopTimeout).
const defaultStopTimeout = 2 * time.Minute

func parseStop(env *Env, args []string) (*stopOptions, error) {
	o := &stopOptions{}
	fs := newFlags(env, "stop", "[--timeout D] NAME\n\nEnds a wrapped agent gracefully: its SessionEnd hooks run and what they print is typed in\n(with [memory] prompt_on_end = true, a reminder to save what it learned with @memory:save);\nrelay waits for that turn to end (at most --timeout), then ends the agent the way its\nprofile says (Claude Code's /exit, a shell's exit), else with SIGTERM.")
	addHubFlags(fs, &o.hub)
	fs.DurationVar(&o.timeout, "timeout", defaultStopTimeout, "how long to wait for the agent's last turn")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 1 { // flags after the name, as in relay stop Alice --timeout 30s
		name := fs.Arg(0)
		if err := parseFlags(fs, fs.Args()[1:]); err != nil {
			return nil, err
		}
		if fs.NArg() > 0 {
			return nil, usagef("want one agent name, have %q and %q", name, fs.Arg(0))
		}
		o.name = name
	} else if fs.NArg() == 1 {
		o.name = fs.Arg(0)
	}
	if o.name == "" {
		return nil, usagef("want one agent name, e.g. relay stop Alice")
	}
	if err := bus.ValidName("agent", o.name); err != nil {
		return nil, usagef("%v", err)
	}
	if o.timeout <= 0 {
		return nil, usagef("--timeout must be positive")
	}
	return o, nil
}

// runStop is `relay stop NAME`: a stop request on the agent's control
// subject (bus.ControlSubject), answered by its wrapper, then a wait until
// the hub lists the agent offline.
func runStop(ctx context.Context, env *Env, args []string) error {
	o, err := parseStop(env, args)
	if err != nil {
		return err
	}
	c, err := connectBus(ctx, env, &o.hub, "", false)
	if err != nil {
		return err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err = c.Control(rctx, o.name, bus.Control{Op: bus.OpStop, Timeout: o.timeout, By: defaultSender(env)})
	cancel()
	if errors.Is(err, bus.ErrPermission) {
		why := "this credential may not stop agents"
		if id, _ := agentIdentity(env); id != nil && o.hub.hub == "" {
			why = fmt.Sprintf("inside agent %s, relay acts with %s's own credential, which may not stop agents; run relay stop from your own shell", id.Name, id.Name)
		}
		return fmt.Errorf("%s: refused: %s (%w)", o.name, why, err)
	}
	if errors.Is(err, bus.ErrNotRunning) {
		return fmt.Errorf("%w: no wrapper of %s answers in workspace %s (see relay agents)", err, o.name, c.Workspace())
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: ending (SessionEnd hooks, its last turn, then exit)\n", o.name)
	deadline := time.Now().Add(o.timeout + stopExitGrace)
	for {
		gone, err := offline(ctx, c, o.name)
		if err == nil && gone {
			fmt.Fprintf(env.Stdout, "%s: stopped\n", o.name)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is still running after %v", o.name, o.timeout+stopExitGrace)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// offline reports whether the hub lists name offline (or not at all).
func offline(ctx context.Context, c *bus.Client, name string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	list, err := c.Agents(ctx)
	if err != nil {
		return false, err
	}
	for _, p := range list {
		if p.Name == name {
			return p.State == bus.StateOffline, nil
		}
	}
	return true, nil
}
