// Package hooks runs user commands for relay: the handlers of user
// namespaces (`@deploy:staging …` runs `[patterns.deploy]`) and the
// lifecycle hooks of `[[hooks.EVENT]]`.
//
// Every command gets its input as JSON on stdin and as RELAY_* environment
// variables, never spliced into a command line: a string command is run as
// `sh -c <the configured string>` exactly as configured, so text written by
// an agent cannot become shell syntax. Each command runs in its own process
// group with a time limit; on timeout or cancellation the whole group is
// sent SIGTERM, then SIGKILL after KillGrace. Stdout and stderr are capped
// at MaxOutput each.
//
// Results follow Claude Code's hooks: exit 0 with plain text on stdout is
// text to type back into the agent; exit 0 with a JSON object may say
// `{"inject": "…", "stop": true, "block": true, "reason": "…"}` (or Claude
// Code's `{"decision": "block", "reason": "…"}`); exit 2 refuses, with
// stderr as the reason; any other status is a non-blocking error.
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/relayhq/relay/internal/config"
)

// Limits of one command run.
const (
	// MaxOutput caps what is kept of stdout and of stderr; the rest is read
	// and dropped so the command never blocks on a full pipe.
	MaxOutput = 64 << 10
	// KillGrace is how long a timed-out process group has between SIGTERM
	// and SIGKILL.
	KillGrace = 2 * time.Second
	// DefaultTimeout applies when a Command has none.
	DefaultTimeout = config.DefaultTimeout
	// drainWait bounds how long output is read after the group is gone (a
	// process that escaped the group with setsid may still hold the pipe).
	drainWait = 500 * time.Millisecond
)

// ErrTimeout is wrapped by the error of a command that ran past its time
// limit ("timed out after 5s"); its process group has been killed.
var ErrTimeout = errors.New("timed out")

// ExitError is a command that exited with a status other than 0 and 2: a
// non-blocking failure. Stderr holds the start of its error output.
type ExitError struct {
	Code   int
	Stderr string
}

// Error gives the status and the first lines of stderr.
func (e *ExitError) Error() string {
	msg := fmt.Sprintf("exit status %d", e.Code)
	if s := firstLines(e.Stderr, 3); s != "" {
		msg += ": " + s
	}
	return msg
}

// Command is one program to run.
type Command struct {
	// Argv is run directly (Argv[0] is looked up in PATH unless it holds a
	// slash; a relative path is relative to Dir).
	Argv []string
	// Shell, used when Argv is empty, is run as `sh -c Shell`. It is passed
	// as configured: data reaches it only through stdin and the
	// environment.
	Shell string
	// Dir is the working folder; "" is relay's own.
	Dir string
	// Timeout limits the run; zero means DefaultTimeout.
	Timeout time.Duration
	// Env is the base environment ("K=V"); nil means relay's own. The vars
	// given to Run are added on top.
	Env []string
}

// Outcome is what a command asked for.
type Outcome struct {
	// Inject is text to type back into the agent ("" for none).
	Inject string
	// Stop ends the chain: no later handler or hook runs.
	Stop bool
	// Block refuses the action (exit 2, or "block" in JSON); Reason says
	// why, for the agent or the sender.
	Block  bool
	Reason string
	// Message, when not nil, replaces the text of a received message
	// (MessageReceived hooks).
	Message *string
	// Hold keeps a received message queued instead of typing it in now.
	Hold bool
	// Neutralize asks that Inject be typed as a peer's text is: every
	// command-like "@word:" in it neutralised ({"neutralize": true}, for
	// a hook that passes on what others wrote). By default a hook's text
	// keeps its commands, so that an agent can follow its instructions.
	Neutralize bool
	// Truncated says stdout or stderr went over MaxOutput.
	Truncated bool
	// Stderr is the command's error output (capped), kept for logs.
	Stderr string
}

// Run starts c with input as JSON on stdin (nil: empty stdin) and vars
// added to its environment, waits for it within its time limit, and reads
// its result. A time-out returns an error wrapping ErrTimeout; a status
// other than 0 and 2 returns an *ExitError; exit 2 is not an error but an
// Outcome with Block set. When Run returns, nothing is left running in the
// command's process group.
func Run(ctx context.Context, c Command, input any, vars map[string]string) (Outcome, error) {
	argv := c.Argv
	if len(argv) == 0 {
		if strings.TrimSpace(c.Shell) == "" {
			return Outcome{}, errors.New("run hook: empty command")
		}
		argv = []string{"sh", "-c", c.Shell}
	}
	var stdin []byte
	if input != nil {
		var err error
		if stdin, err = json.Marshal(input); err != nil {
			return Outcome{}, fmt.Errorf("run %s: encode input: %w", argv[0], err)
		}
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	p, err := start(argv, c.Dir, environ(c.Env, vars), stdin)
	if err != nil {
		return Outcome{}, err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var runErr error
	select {
	case <-p.exited:
	case <-timer.C:
		runErr = fmt.Errorf("%w after %v", ErrTimeout, timeout)
	case <-ctx.Done():
		runErr = fmt.Errorf("run %s: %w", argv[0], ctx.Err())
	}
	if runErr != nil {
		p.signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(KillGrace):
		}
	}
	status := p.finish()
	out := Outcome{Stderr: p.stderr.String(), Truncated: p.stdout.truncated || p.stderr.truncated}
	if runErr != nil {
		return out, runErr
	}
	switch status {
	case 0:
		readStdout(&out, p.stdout)
		return out, nil
	case 2:
		out.Block = true
		out.Reason = strings.TrimSpace(out.Stderr)
		if p.stderr.truncated {
			out.Reason += truncNote
		}
		if out.Reason == "" {
			out.Reason = "refused (exit status 2)"
		}
		return out, nil
	default:
		return out, &ExitError{Code: status, Stderr: out.Stderr}
	}
}

const truncNote = "\n[relay: output truncated at 64 KiB]"

// jsonResult is the JSON a command may print on stdout, in relay's shape
// and Claude Code's.
type jsonResult struct {
	Inject             *string `json:"inject"`
	Stop               *bool   `json:"stop"`
	Block              *bool   `json:"block"`
	Reason             *string `json:"reason"`
	Message            *string `json:"message"`
	Hold               *bool   `json:"hold"`
	Neutralize         *bool   `json:"neutralize"`
	Decision           *string `json:"decision"`
	Continue           *bool   `json:"continue"`
	StopReason         *string `json:"stopReason"`
	HookSpecificOutput *struct {
		AdditionalContext *string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// readStdout reads a successful command's stdout: a JSON object with at
// least one known field is a result; anything else is text to inject.
func readStdout(out *Outcome, b *capped) {
	text := b.String()
	trimmed := strings.TrimSpace(text)
	if strings.HasPrefix(trimmed, "{") && !b.truncated {
		var r jsonResult
		var known map[string]json.RawMessage
		if json.Unmarshal([]byte(trimmed), &r) == nil && json.Unmarshal([]byte(trimmed), &known) == nil && hasKnown(known) {
			if r.Inject != nil {
				out.Inject = *r.Inject
			}
			if r.HookSpecificOutput != nil && r.HookSpecificOutput.AdditionalContext != nil && out.Inject == "" {
				out.Inject = *r.HookSpecificOutput.AdditionalContext
			}
			out.Stop = (r.Stop != nil && *r.Stop) || (r.Continue != nil && !*r.Continue)
			out.Block = (r.Block != nil && *r.Block) || (r.Decision != nil && *r.Decision == "block")
			if r.Reason != nil {
				out.Reason = *r.Reason
			} else if r.StopReason != nil {
				out.Reason = *r.StopReason
			}
			out.Message = r.Message
			out.Hold = r.Hold != nil && *r.Hold
			out.Neutralize = r.Neutralize != nil && *r.Neutralize
			return
		}
	}
	out.Inject = strings.TrimRight(text, "\n")
	if b.truncated {
		out.Inject += truncNote
	}
}

func hasKnown(m map[string]json.RawMessage) bool {
	for _, k := range []string{"inject", "stop", "block", "reason", "message", "hold", "neutralize", "decision", "continue", "stopReason", "hookSpecificOutput"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// environ is base (nil: the process's) with vars set on top, sorted so
// runs are reproducible; later entries win in exec.
func environ(base []string, vars map[string]string) []string {
	if base == nil {
		base = os.Environ()
	}
	env := append([]string(nil), base...)
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+vars[k])
	}
	return env
}

// proc is a started command with its pipes.
type proc struct {
	cmd             *exec.Cmd
	pid             int
	exited          chan struct{} // closed when the leader has exited (not yet reaped)
	stdout, stderr  *capped
	readers         chan struct{} // one value per finished reader
	inW, outR, errR *os.File
}

func start(argv []string, dir string, env []string, stdin []byte) (*proc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", argv[0], err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("run %s: %w", argv[0], err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return nil, fmt.Errorf("run %s: %w", argv[0], err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("run %s: %w", argv[0], err)
	}
	p := &proc{
		cmd: cmd, pid: cmd.Process.Pid, exited: make(chan struct{}),
		stdout: &capped{}, stderr: &capped{}, readers: make(chan struct{}, 2),
		inW: inW, outR: outR, errR: errR,
	}
	go func() {
		// A command that does not read its stdin gets EPIPE here, which
		// is fine: the input was offered.
		inW.Write(stdin)
		inW.Close()
	}()
	go p.read(outR, p.stdout)
	go p.read(errR, p.stderr)
	go func() {
		// Wait for the exit without reaping, so the group id stays the
		// leader's until finish has killed what is left in it.
		waitExitNoReap(p.pid)
		close(p.exited)
	}()
	return p, nil
}

func (p *proc) read(r *os.File, dst *capped) {
	io.Copy(dst, r)
	p.readers <- struct{}{}
}

// signal sends sig to the whole process group.
func (p *proc) signal(sig syscall.Signal) { unix.Kill(-p.pid, sig) }

// finish kills whatever is left in the group, reaps the leader, waits
// briefly for the output readers and returns the exit status (-1 when a
// signal ended it).
func (p *proc) finish() int {
	p.signal(syscall.SIGKILL)
	<-p.exited
	p.cmd.Wait()
	deadline := time.Now().Add(drainWait)
	p.outR.SetReadDeadline(deadline)
	p.errR.SetReadDeadline(deadline)
	<-p.readers
	<-p.readers
	p.inW.Close() // unblocks the input writer if an escaped process holds stdin
	p.outR.Close()
	p.errR.Close()
	return p.cmd.ProcessState.ExitCode()
}

// capped keeps the first MaxOutput bytes written to it and counts the
// rest as dropped.
type capped struct {
	buf       bytes.Buffer
	truncated bool
}

func (c *capped) Write(b []byte) (int, error) {
	if room := MaxOutput - c.buf.Len(); room < len(b) {
		c.truncated = true
		if room > 0 {
			c.buf.Write(b[:room])
		}
		return len(b), nil
	}
	return c.buf.Write(b)
}

func (c *capped) String() string { return c.buf.String() }

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, " / ")
}
