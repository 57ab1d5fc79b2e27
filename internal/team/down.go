package team

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/relayhq/relay/bus"
)

// StopTimeout bounds each agent's last turn in Down, as relay stop's
// --timeout does; StopGrace is the wait past it for the agent to go.
const (
	StopTimeout = 2 * time.Minute
	StopGrace   = 35 * time.Second
)

// Down ends the team's agents as relay stop does, all at once (SessionEnd
// first, the agent's last turn, then its exit), waits until the hub lists
// them offline, then closes the team's tmux session. The hub stays; the
// worktrees stay (they hold the user's work). b is nil when no hub runs.
func Down(ctx context.Context, o Options, b Bus) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	live := map[string]bool{}
	if b != nil {
		list, err := b.Agents(ctx)
		if err != nil {
			return fmt.Errorf("list the agents: %w", err)
		}
		for _, p := range list {
			live[p.Name] = p.State != bus.StateOffline
		}
	}
	for _, a := range o.File.Agents {
		if !live[a.Name] {
			continue
		}
		wg.Go(func() {
			err := stopOne(ctx, o, b, a.Name)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			fmt.Fprintf(o.Out, "%s: stopped\n", a.Name)
		})
	}
	wg.Wait()
	if t, err := findTmux(o.Env); err == nil && t.hasSession(ctx, SessionName(o.Workspace)) {
		if err := t.killSession(ctx, SessionName(o.Workspace)); err != nil {
			errs = append(errs, err)
		} else {
			fmt.Fprintf(o.Out, "tmux session %s closed\n", SessionName(o.Workspace))
		}
	}
	for _, a := range o.File.Agents {
		for _, ext := range []string{".pid", ".in"} {
			os.Remove(filepath.Join(o.Home, "team", o.Workspace, a.Name+ext))
		}
	}
	return errors.Join(errs...)
}

// stopOne asks the agent's wrapper to stop and waits until it is offline.
func stopOne(ctx context.Context, o Options, b Bus, name string) error {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := b.Control(rctx, name, bus.Control{Op: bus.OpStop, Timeout: StopTimeout, By: o.By})
	cancel()
	if errors.Is(err, bus.ErrNotRunning) {
		return nil // gone meanwhile
	}
	if err != nil {
		return fmt.Errorf("stop %s: %w", name, err)
	}
	deadline := time.Now().Add(StopTimeout + StopGrace)
	for {
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		list, err := b.Agents(lctx)
		cancel()
		if err == nil {
			gone := true
			for _, p := range list {
				if p.Name == name && p.State != bus.StateOffline {
					gone = false
				}
			}
			if gone {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is still running after %v", name, StopTimeout+StopGrace)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Status writes the team's agents: state and pending messages on the hub,
// where each runs (its tmux window, or headless with its pid) and its
// worktree. b is nil when no hub runs.
func Status(ctx context.Context, o Options, b Bus) error {
	pres := map[string]bus.Presence{}
	if b != nil {
		list, err := b.Agents(ctx)
		if err != nil {
			return fmt.Errorf("list the agents: %w", err)
		}
		for _, p := range list {
			pres[p.Name] = p
		}
	}
	windows := map[string]int{}
	if t, err := findTmux(o.Env); err == nil {
		windows = t.windows(ctx, SessionName(o.Workspace))
	}
	tw := tabwriter.NewWriter(o.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tPENDING\tWHERE\tWORKTREE")
	for _, a := range o.File.Agents {
		state, pending := "not started", "-"
		if p, ok := pres[a.Name]; ok {
			state, pending = string(p.State), fmt.Sprint(p.Pending)
		}
		where := "-"
		if _, ok := windows[a.Name]; ok {
			where = "tmux " + SessionName(o.Workspace) + ":" + a.Name
		} else if pid := headlessPID(o, a.Name); pid != 0 && pres[a.Name].PID == pid && pres[a.Name].State != bus.StateOffline {
			where = fmt.Sprintf("headless (pid %d)", pid)
		}
		wt := "-"
		if a.Worktree {
			if p, err := Worktree(ctx, a); err == nil {
				wt = p + " (" + Branch(a.Name) + ")"
				if _, err := os.Stat(p); err != nil {
					wt += ", not made yet"
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, state, pending, where, wt)
	}
	return tw.Flush()
}

// Attach returns the tmux command line that shows agent name's window:
// attach-session from outside tmux, switch-client from inside (TMUX set).
func Attach(ctx context.Context, o Options, name string) ([]string, error) {
	t, err := findTmux(o.Env)
	if err != nil {
		return nil, err
	}
	session := SessionName(o.Workspace)
	if _, ok := t.windows(ctx, session)[name]; !ok {
		return nil, fmt.Errorf("%s has no window in tmux session %s (relay team status lists the team)", name, session)
	}
	target := "=" + session + ":" + name
	for _, kv := range o.Env {
		if strings.HasPrefix(kv, "TMUX=") && kv != "TMUX=" {
			return []string{t.bin, "switch-client", "-t", target}, nil
		}
	}
	return []string{t.bin, "attach-session", "-t", target}, nil
}
