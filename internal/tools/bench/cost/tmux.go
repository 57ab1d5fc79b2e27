package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// tmuxTerm is a tmux server of the bench's own (its own socket in the
// bench's folder, no configuration): a real terminal emulator, which parses every byte it
// reads into its screen, as the terminal in front of a person does. A
// command run in it is slowed by how fast tmux takes its output, as it
// would be on a person's screen; the pass-through's row through it says
// whether relay adds anything to that.
type tmuxTerm struct {
	sock string // -S: the server's socket
	env  []string
	dir  string
	runs int // commands run so far: each has a wait channel and a file of its own
}

// startTmux starts the server with a session that only holds it open.
func startTmux(h *harness) (*tmuxTerm, error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, err
	}
	t := &tmuxTerm{sock: filepath.Join(h.dir, "tmux"), dir: h.dir}
	for _, kv := range h.env() {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			t.env = append(t.env, kv)
		}
	}
	if err := t.tmux(10*time.Second, "new-session", "-d", "-s", "keep", "-x", "120", "-y", "40", "sleep", "1d"); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *tmuxTerm) tmux(timeout time.Duration, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-S", t.sock, "-f", "/dev/null"}, args...)...)
	cmd.Env, cmd.Dir = t.env, t.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("tmux %s: %w: %s", args[0], err, bytes.TrimSpace(out))
	}
	return nil
}

// close ends the server and every session in it.
func (t *tmuxTerm) close() { _ = t.tmux(10*time.Second, "kill-server") }

// timed runs argv in a new 120x40 window of the server and returns its
// wall time and CPU time (with its children), both measured by the bash
// that runs it in the window: from just before argv starts until it
// exited. tmux tells nothing of the bytes or when the first and last
// came, so flow and shown are 0.
func (t *tmuxTerm) timed(argv []string) (timing, error) {
	t.runs++
	ch := fmt.Sprintf("done-%d", t.runs)
	out := filepath.Join(t.dir, fmt.Sprintf("tmux-%d", t.runs))
	defer os.Remove(out)
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	// times: the shell's children's user and system time, which is argv's
	// alone as it is the only child that ran.
	script := fmt.Sprintf(`s=$EPOCHREALTIME; %s; rc=$?; e=$EPOCHREALTIME; { echo "$s $e $rc"; times; } >%s; tmux -S %s wait-for -S %s`,
		strings.Join(q, " "), shellQuote(out), shellQuote(t.sock), ch)
	if err := t.tmux(10*time.Second, "new-session", "-d", "-x", "120", "-y", "40", "bash", "--norc", "--noprofile", "-c", script); err != nil {
		return timing{}, err
	}
	if err := t.tmux(2*time.Minute, "wait-for", ch); err != nil {
		return timing{}, err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return timing{}, err
	}
	return parseTmuxTimes(string(b), argv)
}

// parseTmuxTimes reads "START END RC" and the output of bash's times (the
// shell's own times, then its children's: "0m0.012s 0m0.345s").
func parseTmuxTimes(s string, argv []string) (timing, error) {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) < 3 {
		return timing{}, fmt.Errorf("tmux run of %v: %q", argv, s)
	}
	f := strings.Fields(lines[0])
	if len(f) != 3 {
		return timing{}, fmt.Errorf("tmux run of %v: %q", argv, lines[0])
	}
	start, err1 := strconv.ParseFloat(f[0], 64)
	end, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil {
		return timing{}, fmt.Errorf("tmux run of %v: %q", argv, lines[0])
	}
	m := timing{wall: time.Duration((end - start) * float64(time.Second))}
	for _, c := range strings.Fields(lines[2]) {
		d, err := time.ParseDuration(c) // "0m0.012s"
		if err != nil {
			return m, fmt.Errorf("tmux run of %v: times %q: %w", argv, lines[2], err)
		}
		m.cpu += d
	}
	if f[2] != "0" {
		return m, fmt.Errorf("tmux run of %v: exit status %s", argv, f[2])
	}
	return m, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
