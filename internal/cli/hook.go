package cli

import (
	"context"
	"io"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/registry"
	"github.com/relayhq/relay/internal/hookrpc"
)

// runHook is `relay hook EVENT`: Claude Code runs it for its hooks (the
// settings that the claude profile passes with --settings). It forwards
// the hook's stdin JSON to the wrapper over RELAY_HOOK_SOCKET, prints the
// wrapper's answer and exits with its code. Whatever goes wrong (no
// wrapper, no answer in time (hookrpc.Limit), bad input) it prints
// nothing and exits 0.
func runHook(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 || args[0] == "" || args[0][0] == '-' {
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
			io.WriteString(env.Stdout, "Usage: relay hook EVENT\n\nForwards a hook of "+
				registry.JoinWords(registry.CLIsWhere(func(p agents.Profile) bool { return p.HookCommand }), "or")+
				" (JSON on stdin) to its relay wrapper over $"+hookrpc.SocketEnv+".\n")
			return nil
		}
		return usagef("want one argument, the hook event (e.g. Stop)")
	}
	event := args[0]
	start := time.Now()
	path := env.getenv(hookrpc.SocketEnv)
	if path == "" {
		return nil
	}
	ctx, cancel := context.WithDeadline(ctx, start.Add(hookrpc.Limit(event)))
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
