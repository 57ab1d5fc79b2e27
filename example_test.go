package relay_test

import (
	"context"
	"fmt"
	"os"

	"github.com/relayhq/relay"
)

// A Go program that wraps an agent and handles a namespace of its own.
func Example() {
	r, err := relay.New(relay.Options{Home: os.TempDir() + "/relay-example", Hub: relay.NoHub})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = r.Pattern("deploy", func(ctx context.Context, m relay.Match) (relay.Result, error) {
		return relay.Result{Inject: "Deployed " + m.Body + " to " + m.Target}, nil
	})
	r.On(relay.SessionStart, func(ctx context.Context, e relay.EventInfo) (relay.Result, error) {
		return relay.Result{Inject: "Welcome, " + e.Agent + "."}, nil
	})
	fmt.Println("ready")
	// r.Wrap(ctx, "claude") would now run Claude Code as this relay's agent.
	// Output: ready
}

// Handlers of one namespace run in registration order until one stops the
// chain; an invalid namespace name is refused.
func ExampleRelay_Pattern() {
	r, _ := relay.New(relay.Options{Home: os.TempDir() + "/relay-example"})
	err := r.Pattern("deploy", func(ctx context.Context, m relay.Match) (relay.Result, error) {
		return relay.Result{Inject: "ok", Stop: true}, nil
	})
	fmt.Println(err)
	err = r.Pattern("not a name", nil)
	fmt.Println(err != nil)
	// Output:
	// <nil>
	// true
}
