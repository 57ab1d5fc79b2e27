// Command deploy wraps an agent CLI with a @deploy: namespace handled in Go:
// when the agent writes
//
//	@deploy:staging Release v1.2.3
//
// the handler runs (here it only pretends to deploy) and its answer is
// typed back into the agent. Everything else relay does (messages to peers,
// memory) works as with `relay wrap`.
//
//	go run ./examples/deploy -- claude
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/relayhq/relay"
)

func main() {
	os.Exit(run())
}

func run() int {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: deploy [--] COMMAND [ARGS...]")
		return 2
	}
	home, err := relay.DefaultHome()
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploy:", err)
		return 1
	}
	r, err := relay.New(relay.Options{Home: home, Hub: os.Getenv("RELAY_HUB"), Token: os.Getenv("RELAY_TOKEN")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploy:", err)
		return 2
	}
	err = r.Pattern("deploy", func(ctx context.Context, m relay.Match) (relay.Result, error) {
		env := strings.ToLower(m.Target)
		if env != "staging" && env != "production" {
			return relay.Result{Inject: fmt.Sprintf("Unknown environment %q: use @deploy:staging or @deploy:production.", m.Target)}, nil
		}
		// A real handler would call its deploy system here.
		return relay.Result{Inject: fmt.Sprintf("Deployed %s to %s.", m.Body, env)}, nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploy:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	code, err := r.Wrap(ctx, args[0], args[1:]...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploy:", err)
		return 1
	}
	return code
}
