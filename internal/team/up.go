package team

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/session"
)

// DefaultJoinWait is how long Up waits for the agents it started to join.
const DefaultJoinWait = time.Minute

// ErrNotJoined is returned by Up when an agent it started has not joined
// the team in time (or exited before it did).
var ErrNotJoined = errors.New("not joined")

// Options is what Up, Status and Down need.
type Options struct {
	File      *File
	Workspace string    // the file's, else the configuration's
	Home      string    // RELAY_HOME
	Relay     string    // the relay binary the agents are wrapped with
	Env       []string  // the caller's environment, handed to the agents
	Headless  bool      // start the agents in the background even where tmux is
	Out       io.Writer // one line an agent
	// JoinWait is how long Up waits for the agents to join; zero means
	// DefaultJoinWait.
	JoinWait time.Duration
	// By names who stops the agents (Down), as relay stop's sender.
	By string
}

// Bus is what the team commands ask of the hub (a *bus.Client).
type Bus interface {
	Agents(ctx context.Context) ([]bus.Presence, error)
	Control(ctx context.Context, agent string, req bus.Control) (bus.ControlReply, error)
}

// Problems is every check that failed; Up starts nothing when there is one.
type Problems []error

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap gives errors.Is access to each problem.
func (ps Problems) Unwrap() []error { return ps }

// agentEnv is the environment agent a is wrapped with: the caller's
// without what names another agent or another terminal, then the
// agent's own env.
func agentEnv(base []string, a Agent) []string {
	drop := []string{"RELAY_NAME", "RELAY_SESSION_ID", "RELAY_AGENT_FILE", "TMUX", "TMUX_PANE", "PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES"}
	env := make([]string, 0, len(base)+len(a.Env))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(drop, k) {
			continue
		}
		if _, mine := a.Env[k]; mine {
			continue
		}
		env = append(env, kv)
	}
	keys := make([]string, 0, len(a.Env))
	for k := range a.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+a.Env[k])
	}
	return env
}

func lookPath(name string, env []string) (string, error) { return session.LookPath(name, env, "") }

// Check checks what the file asks of this machine, every agent: its folder,
// its command (in the PATH its env gives), a git repository for a worktree.
func Check(ctx context.Context, o Options) error {
	var ps Problems
	for _, a := range o.File.Agents {
		st, err := os.Stat(a.Cwd)
		if err != nil || !st.IsDir() {
			ps = append(ps, fmt.Errorf("%s: cwd %s is not a folder", a.Name, a.Cwd))
			continue
		}
		if a.Worktree {
			if _, err := gitRoot(ctx, a.Cwd); err != nil {
				ps = append(ps, fmt.Errorf("%s: %w", a.Name, err))
			}
		}
		if _, err := session.LookPath(a.Command[0], agentEnv(o.Env, a), a.Cwd); err != nil {
			ps = append(ps, fmt.Errorf("%s: %w", a.Name, err))
		}
	}
	if len(ps) > 0 {
		return ps
	}
	return nil
}

// Plan is what Up will do: the agents to start, those running already.
type Plan struct {
	Start, Running []Agent
	tmux           *tmux // nil: headless
}

// MakePlan sorts the file's agents into those to start and those that run
// already (in the team's tmux session or headless, live on the hub): left
// alone. A live agent of a name in the file that this team did not start
// is a problem. b is nil when no hub runs yet (no agent is live).
func MakePlan(ctx context.Context, o Options, b Bus) (*Plan, error) {
	p := &Plan{}
	if !o.Headless {
		if t, err := findTmux(o.Env); err == nil {
			p.tmux = t
		}
	}
	live := map[string]bus.Presence{}
	if b != nil {
		list, err := b.Agents(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the agents: %w", err)
		}
		for _, pr := range list {
			if pr.State != bus.StateOffline {
				live[pr.Name] = pr
			}
		}
	}
	windows := map[string]int{}
	t, err := findTmux(o.Env)
	if err == nil {
		windows = t.windows(ctx, SessionName(o.Workspace))
	}
	var ps Problems
	for _, a := range o.File.Agents {
		pr, isLive := live[a.Name]
		_, inWindow := windows[a.Name]
		if _, ended := exited(o, a.Name, true); inWindow && ended {
			// Its wrapper ended and the window shows why: started anew.
			if err := t.killWindow(ctx, SessionName(o.Workspace), a.Name); err != nil {
				ps = append(ps, err)
			}
			inWindow = false
		}
		switch {
		case inWindow || (isLive && headlessPID(o, a.Name) == pr.PID && pr.PID != 0):
			p.Running = append(p.Running, a)
		case isLive:
			ps = append(ps, fmt.Errorf("%s: the name is taken by a live agent of workspace %s that this team did not start (pid %d on %s); stop it or rename the agent", a.Name, o.Workspace, pr.PID, pr.Host))
		default:
			p.Start = append(p.Start, a)
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return p, nil
}

// Headless reports whether the plan starts its agents without tmux.
func (p *Plan) Headless() bool { return p.tmux == nil }

// wrapArgs is the relay wrap command line of agent a.
func wrapArgs(o Options, a Agent) []string {
	args := []string{o.Relay, "wrap", "--name", a.Name, "--workspace", o.Workspace}
	if a.Profile != "" {
		args = append(args, "--profile", a.Profile)
	}
	if a.Prompt != "" {
		args = append(args, "--prompt", a.Prompt)
	}
	return append(append(args, "--"), a.Command...)
}

// Run starts the plan's agents (worktrees first), each wrapped in a tmux
// window of its own or in the background, and returns once every agent
// of the file is live on the hub, or ErrNotJoined naming those that are
// not.
func (p *Plan) Run(ctx context.Context, o Options, b Bus) error {
	for _, a := range p.Running {
		fmt.Fprintf(o.Out, "%s: running already, left alone\n", a.Name)
	}
	var started []string
	for _, a := range p.Start {
		dir := a.Cwd
		if a.Worktree {
			wt, created, err := ensureWorktree(ctx, a)
			if err != nil {
				return err
			}
			dir = wt
			if created {
				fmt.Fprintf(o.Out, "%s: worktree %s on branch %s\n", a.Name, wt, Branch(a.Name))
			}
		}
		var err error
		if p.tmux != nil {
			err = startInTmux(ctx, p.tmux, o, a, dir)
		} else {
			err = startHeadless(o, a, dir)
		}
		if err != nil {
			return fmt.Errorf("start %s: %w", a.Name, err)
		}
		started = append(started, a.Name)
	}
	return p.waitJoined(ctx, o, b, started)
}

// waitJoined waits until every agent of the file is live on the hub.
func (p *Plan) waitJoined(ctx context.Context, o Options, b Bus, started []string) error {
	wait := o.JoinWait
	if wait <= 0 {
		wait = DefaultJoinWait
	}
	deadline := time.Now().Add(wait)
	for {
		missing, err := p.notJoined(ctx, o, b)
		var gone []string
		for _, n := range missing {
			if slices.Contains(started, n) {
				if why, ok := exited(o, n, p.tmux != nil); ok {
					gone = append(gone, why)
				}
			}
		}
		if len(gone) > 0 {
			return fmt.Errorf("%w: %s", ErrNotJoined, strings.Join(gone, "; "))
		}
		if err == nil && len(missing) == 0 {
			for _, n := range started {
				fmt.Fprintf(o.Out, "%s: joined\n", n)
			}
			where := "in the background (relay dashboard shows them)"
			if p.tmux != nil {
				where = "in tmux session " + SessionName(o.Workspace) + " (relay attach NAME)"
			}
			fmt.Fprintf(o.Out, "team of %d up in workspace %s, %s\n", len(o.File.Agents), o.Workspace, where)
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("%w: %w", ErrNotJoined, err)
			}
			return fmt.Errorf("%w after %v: %s", ErrNotJoined, wait, strings.Join(missing, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// notJoined lists the file's agents not live on the hub.
func (p *Plan) notJoined(ctx context.Context, o Options, b Bus) ([]string, error) {
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	list, err := b.Agents(lctx)
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	for _, pr := range list {
		live[pr.Name] = pr.State != bus.StateOffline
	}
	var missing []string
	for _, a := range o.File.Agents {
		if !live[a.Name] {
			missing = append(missing, a.Name)
		}
	}
	return missing, nil
}
