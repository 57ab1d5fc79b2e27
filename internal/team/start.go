package team

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/relayhq/relay/internal/statedir"
)

// stateDir is where the team keeps its files for a workspace:
// RELAY_HOME/team/WORKSPACE (the headless agents' pids and logs, the
// windows' start scripts while they start).
func stateDir(o Options) (string, error) {
	// It holds start scripts with the agents' environment: no link, no
	// other user's folder (statedir.EnsureSub).
	dir, err := statedir.EnsureSub(o.Home, "team", o.Workspace)
	if err != nil {
		return "", fmt.Errorf("team state folder: %w", err)
	}
	return dir, nil
}

// shellQuote quotes s for sh, so that nothing in it is expanded.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// startInTmux runs the agent's wrapper in a new window of the team's tmux
// session. The window runs a script (0600, in the state folder, removed as
// it starts) that sets the agent's environment and runs relay wrap: a
// tmux server started earlier has its own environment, and the
// environment (a token) must not pass through a command line. A wrapper
// that fails leaves its window open with its message, and its status in
// NAME.exit for Up to see.
func startInTmux(ctx context.Context, t *tmux, o Options, a Agent, dir string) error {
	sd, err := stateDir(o)
	if err != nil {
		return err
	}
	exitFile := filepath.Join(sd, a.Name+".exit")
	os.Remove(exitFile)
	var b strings.Builder
	b.WriteString("rm -f -- \"$0\"\n")
	for _, kv := range agentEnv(o.Env, a) {
		k, v, _ := strings.Cut(kv, "=")
		if !envKeyRE().MatchString(k) || k == "TERM" && a.Env["TERM"] == "" {
			continue // TERM is the window's, tmux's own
		}
		fmt.Fprintf(&b, "export %s=%s\n", k, shellQuote(v))
	}
	for _, arg := range wrapArgs(o, a) {
		b.WriteString(shellQuote(arg) + " ")
	}
	fmt.Fprintf(&b, "\nst=$?\necho \"$st\" > %s\n", shellQuote(exitFile))
	b.WriteString(`case $st in 0|129|130|143) exit "$st";; esac
printf '\n[relay team] relay wrap ended with status %s; press Enter to close this window.\n' "$st"
read _
`)
	script := filepath.Join(sd, a.Name+".sh")
	if err := os.WriteFile(script, []byte(b.String()), 0o600); err != nil {
		return err
	}
	if err := t.newWindow(ctx, SessionName(o.Workspace), a.Name, dir, "sh", script); err != nil {
		os.Remove(script)
		return err
	}
	return nil
}

// startHeadless runs the agent's wrapper in the background, in a session of
// its own: its stdin a FIFO it holds open both ways (so it never reads an
// end, and the dashboard or a script may type into it), its screen
// discarded (the dashboard shows it), its own errors in NAME.log.
func startHeadless(o Options, a Agent, dir string) error {
	sd, err := stateDir(o)
	if err != nil {
		return err
	}
	fifo := filepath.Join(sd, a.Name+".in")
	os.Remove(fifo)
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		return fmt.Errorf("make %s: %w", fifo, err)
	}
	in, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	logf, err := os.OpenFile(filepath.Join(sd, a.Name+".log"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	argv := wrapArgs(o, a)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = agentEnv(o.Env, a)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, null, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	// Reap it if it ends while this process still runs; after, init does.
	go func() { _ = cmd.Wait() }()
	return os.WriteFile(filepath.Join(sd, a.Name+".pid"), []byte(strconv.Itoa(pid)+"\n"), 0o600)
}

// exited reports whether an agent Up started has ended already, and why.
func exited(o Options, name string, tmux bool) (string, bool) {
	sd := filepath.Join(o.Home, "team", o.Workspace)
	if tmux {
		b, err := os.ReadFile(filepath.Join(sd, name+".exit"))
		if err != nil {
			return "", false
		}
		return fmt.Sprintf("%s: relay wrap ended with status %s (its window says why)", name, strings.TrimSpace(string(b))), true
	}
	pid := headlessPID(o, name)
	if pid == 0 || unix.Kill(pid, 0) == nil {
		return "", false
	}
	return fmt.Sprintf("%s: relay wrap ended (see %s)", name, filepath.Join(sd, name+".log")), true
}

// headlessPID returns the pid recorded for a headless agent, or 0.
func headlessPID(o Options, name string) int {
	b, err := os.ReadFile(filepath.Join(o.Home, "team", o.Workspace, name+".pid"))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}
