//go:build !lean

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/team"
	"github.com/relayhq/relay/internal/termsafe"
)

const teamUsage = "up|status|down [--file F] [--headless]\n\n" +
	"  up      start every agent of the team file not running yet, each wrapped in a window of the\n" +
	"          tmux session relay-WORKSPACE (--headless, or without tmux: in the background), and\n" +
	"          return once all joined; nothing starts when the file or a command is wrong\n" +
	"  status  the team's agents: state, pending messages, window, worktree\n" +
	"  down    stop each agent as relay stop does (SessionEnd first), then close the tmux session;\n" +
	"          the hub and the worktrees stay\n\n" +
	"The team file is .relay/team.toml in the project (see docs/team.md)."

// teamOptions are the flags of `relay team SUB`.
type teamOptions struct {
	file     string
	headless bool
}

func runTeam(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return usagef("want a sub-command: up, status or down")
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "up", "status", "down":
	case "-h", "--help", "help":
		fmt.Fprintf(env.Stdout, "Usage: relay team %s\n", teamUsage)
		return nil
	default:
		return usagef("unknown sub-command %q (want up, status or down)", sub)
	}
	var o teamOptions
	fs := newFlags(env, "team "+sub, "[--file F]")
	fs.StringVar(&o.file, "file", "", "the team `file` (default: .relay/team.toml in the project)")
	if sub == "up" {
		fs.BoolVar(&o.headless, "headless", false, "start the agents in the background, not in tmux (the dashboard shows them)")
	}
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	to, err := teamSetup(env, o)
	if err != nil {
		return err
	}
	switch sub {
	case "up":
		return teamUp(ctx, env, to)
	case "status":
		c, err := teamBus(ctx, env, to, false)
		if err != nil {
			return err
		}
		if c != nil {
			defer c.Close()
			return team.Status(ctx, to, c)
		}
		return team.Status(ctx, to, nil)
	default:
		c, err := teamBus(ctx, env, to, false)
		if err != nil {
			return err
		}
		if c != nil {
			defer c.Close()
			return team.Down(ctx, to, c)
		}
		return team.Down(ctx, to, nil)
	}
}

// teamSetup reads the team file (a mistake in it is exit 2, every one
// printed with FILE:LINE:COL) and resolves the workspace and home.
func teamSetup(env *Env, o teamOptions) (team.Options, error) {
	var to team.Options
	path := o.file
	if path == "" {
		wd, err := os.Getwd()
		if err != nil {
			return to, fmt.Errorf("find the working folder: %w", err)
		}
		if path, err = team.Find(wd); err != nil {
			return to, usagef("%v", err)
		}
	}
	f, err := team.Load(path)
	if errors.Is(err, config.ErrInvalid) {
		fmt.Fprintln(env.Stderr, termsafe.Text(err.Error()))
		return to, &ExitError{Code: ExitUsage}
	}
	if err != nil {
		return to, err
	}
	cfg, err := loadConfig(env, configOptions{project: f.Dir, flags: config.Flags{Workspace: f.Workspace}})
	if err != nil {
		return to, err
	}
	home, err := env.EnsureHome()
	if err != nil {
		return to, err
	}
	return team.Options{
		File: f, Workspace: cfg.Workspace, Home: home, Relay: wrapperBinary(env.Executable),
		Env: env.environ(), Headless: o.headless, Out: env.Stdout, By: defaultSender(env),
	}, nil
}

// teamBus connects to the team's hub; with start, one is started if none
// runs (as relay up --detach); without, nil when none runs.
func teamBus(ctx context.Context, env *Env, to team.Options, start bool) (*bus.Client, error) {
	hf := hubFlags{workspace: to.Workspace}
	c, err := connectBus(ctx, env, &hf, "", start)
	if !start && errors.Is(err, hub.ErrNoHub) {
		return nil, nil
	}
	return c, err
}

// teamUp is `relay team up`: every check before anything starts.
func teamUp(ctx context.Context, env *Env, to team.Options) error {
	if err := team.Check(ctx, to); err != nil {
		return err
	}
	c, err := teamBus(ctx, env, to, false)
	if err != nil {
		return err
	}
	var b team.Bus
	if c != nil {
		defer c.Close()
		b = c
	}
	plan, err := team.MakePlan(ctx, to, b)
	if err != nil {
		return err
	}
	if c == nil {
		if c, err = teamBus(ctx, env, to, true); err != nil {
			return err
		}
		defer c.Close()
	}
	return plan.Run(ctx, to, c)
}

// runAttach is `relay attach NAME`: into the agent's tmux window.
func runAttach(ctx context.Context, env *Env, args []string) error {
	var o teamOptions
	fs := newFlags(env, "attach", "[--file F] NAME\n\nShows agent NAME's window of the team's tmux session (relay team up).")
	fs.StringVar(&o.file, "file", "", "the team `file` (default: .relay/team.toml in the project)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want one agent name, e.g. relay attach Alice")
	}
	name := fs.Arg(0)
	if err := bus.ValidName("agent", name); err != nil {
		return usagef("%v", err)
	}
	to, err := teamSetup(env, o)
	if err != nil {
		return err
	}
	argv, err := team.Attach(ctx, to, name)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(context.WithoutCancel(ctx), argv[0], argv[1:]...)
	cmd.Env = to.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = env.Stdin, env.Stdout, env.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return &ExitError{Code: ee.ExitCode()}
		}
		return err
	}
	return nil
}
