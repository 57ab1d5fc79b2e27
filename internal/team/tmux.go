package team

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ErrNoTmux is returned when tmux is needed and not on PATH.
var ErrNoTmux = errors.New("tmux not found")

// SessionName is the tmux session of a workspace's team: relay-WORKSPACE.
func SessionName(workspace string) string { return "relay-" + workspace }

// tmux runs the tmux program with an environment of the caller's (its
// TMUX_TMPDIR or -L choose the server).
type tmux struct {
	bin string
	env []string
}

// findTmux returns tmux from the PATH of env, or ErrNoTmux.
func findTmux(env []string) (*tmux, error) {
	p, err := lookPath("tmux", env)
	if err != nil {
		return nil, ErrNoTmux
	}
	return &tmux{bin: p, env: env}, nil
}

func (t *tmux) run(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.bin, args...)
	cmd.Env = t.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("tmux %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// hasSession reports whether the session exists.
func (t *tmux) hasSession(ctx context.Context, session string) bool {
	_, err := t.run(ctx, "has-session", "-t", "="+session)
	return err == nil
}

// windows returns the session's windows: each name with its first pane's
// pid (the wrapper's: the window runs it with exec). None when the session
// does not exist.
func (t *tmux) windows(ctx context.Context, session string) map[string]int {
	out, err := t.run(ctx, "list-windows", "-t", "="+session, "-F", "#{window_name}\t#{pane_pid}")
	if err != nil {
		return nil
	}
	ws := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		name, pid, ok := strings.Cut(l, "\t")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(pid)
		ws[name] = n
	}
	return ws
}

// newWindow runs argv in a new window named name, in the session (made
// detached with this window when it does not exist yet), in dir.
func (t *tmux) newWindow(ctx context.Context, session, name, dir string, argv ...string) error {
	var args []string
	if t.hasSession(ctx, session) {
		args = []string{"new-window", "-d", "-t", "=" + session + ":", "-n", name, "-c", dir, "--"}
	} else {
		args = []string{"new-session", "-d", "-s", session, "-n", name, "-c", dir, "-x", "160", "-y", "48", "--"}
	}
	_, err := t.run(ctx, append(args, argv...)...)
	return err
}

// killWindow closes one window of the session.
func (t *tmux) killWindow(ctx context.Context, session, name string) error {
	_, err := t.run(ctx, "kill-window", "-t", "="+session+":="+name)
	return err
}

// killSession closes the session; one that is not there is no error.
func (t *tmux) killSession(ctx context.Context, session string) error {
	if !t.hasSession(ctx, session) {
		return nil
	}
	_, err := t.run(ctx, "kill-session", "-t", "="+session)
	if err != nil && !t.hasSession(ctx, session) {
		return nil // closed meanwhile, with its last window
	}
	return err
}
