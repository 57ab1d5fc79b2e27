package relay_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

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

// An Idle reminder on a schedule of one's own: after 2 minutes of quiet,
// then every 10 minutes while the agent stays idle, at most 3 times until
// someone gives it work again. A schedule that could not run as written
// is refused.
func ExampleRelay_OnIdle() {
	r, _ := relay.New(relay.Options{Home: os.TempDir() + "/relay-example", Hub: relay.NoHub})
	err := r.OnIdle(relay.IdleSchedule{After: 2 * time.Minute, Every: 10 * time.Minute, Max: 3},
		func(ctx context.Context, e relay.EventInfo) (relay.Result, error) {
			return relay.Result{Inject: "You have been idle for a while: is the task done?"}, nil
		})
	fmt.Println(err)
	err = r.OnIdle(relay.IdleSchedule{After: -time.Minute}, func(context.Context, relay.EventInfo) (relay.Result, error) {
		return relay.Result{}, nil
	})
	fmt.Println(errors.Is(err, relay.ErrBadSchedule))
	fmt.Println(err)
	// Output:
	// <nil>
	// true
	// relay: OnIdle: invalid idle schedule: After is -1m0s; want 0 (30 s) or more
}
