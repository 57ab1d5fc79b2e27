package cli

import (
	"context"
	"io"
	"time"

	"github.com/relayhq/relay/hookrpc"
)

// HookSocketEnv names the environment variable through which a wrapper
// tells the `relay hook` processes of its agent where its hook socket is.
const HookSocketEnv = "RELAY_HOOK_SOCKET"

// Time limits of `relay hook`, from its start to the wrapper's answer.
// Past them it prints nothing and exits 0, so Claude Code is never held
// up by a wrapper that is gone or stuck.
const (
	// HookStopTimeout is Stop's: the wrapper may hold Stop briefly to
	// hand messages waiting for the agent over as the hook's answer.
	HookStopTimeout = 5 * time.Second
	// HookTimeout is every other event's: the wrapper only takes note.
	HookTimeout = 2 * time.Second
)

// runHook is `relay hook EVENT`: Claude Code runs it for its hooks (the
// settings that the claude profile passes with --settings). It forwards
// the hook's stdin JSON to the wrapper over RELAY_HOOK_SOCKET, prints the
// wrapper's answer and exits with its code. Whatever goes wrong (no
// wrapper, no answer in time, bad input) it prints nothing and exits 0.
func runHook(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 || args[0] == "" || args[0][0] == '-' {
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
			io.WriteString(env.Stdout, "Usage: relay hook EVENT\n\nForwards a Claude Code hook (JSON on stdin) to its relay wrapper over $"+HookSocketEnv+".\n")
			return nil
		}
		return usagef("want one argument, the hook event (e.g. Stop)")
	}
	event := args[0]
	start := time.Now()
	path := env.getenv(HookSocketEnv)
	if path == "" {
		return nil
	}
	limit := HookTimeout
	if event == "Stop" || event == "SubagentStop" {
		limit = HookStopTimeout
	}
	ctx, cancel := context.WithDeadline(ctx, start.Add(limit))
	defer cancel()
	payload, err := readCapped(ctx, env.Stdin, hookrpc.MaxPayload)
	if err != nil {
		return nil
	}
	resp, err := hookrpc.Call(ctx, path, hookrpc.Request{Event: event, Payload: payload})
	if err != nil {
		return nil
	}
	if resp.Stdout != "" {
		io.WriteString(env.Stdout, resp.Stdout)
	}
	if resp.ExitCode != 0 {
		return &ExitError{Code: resp.ExitCode}
	}
	return nil
}

// readCapped reads r to its end, failing past max bytes or when ctx ends
// first (a stdin that is never closed must not hold the hook).
func readCapped(ctx context.Context, r io.Reader, max int64) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, max+1))
		if err == nil && int64(len(b)) > max {
			err = hookrpc.ErrTooLarge
		}
		done <- result{b, err}
	}()
	select {
	case res := <-done:
		return res.b, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
