package relay_test

import (
	"context"
	"fmt"
	"os"

	"github.com/relayhq/relay"
)

// A handler acts as its agent through its context: an Idle handler that
// looks up the team's memory, types a reminder in, and tells a peer what
// the agent last wrote.
func ExampleAgentFrom() {
	r, _ := relay.New(relay.Options{Home: os.TempDir() + "/relay-example", Hub: relay.NoHub})
	r.On(relay.Idle, func(ctx context.Context, e relay.EventInfo) (relay.Result, error) {
		a, ok := relay.AgentFrom(ctx)
		if !ok {
			return relay.Result{}, nil
		}
		notes, err := a.SearchMemory(ctx, "release checklist", 1)
		if err == nil && len(notes) > 0 {
			a.Inject("Before you stop, remember: " + notes[0])
		}
		if n := len(e.RecentOutput); n > 0 {
			return relay.Result{}, a.Send("Bob", a.Name()+" is idle; its last line: "+e.RecentOutput[n-1])
		}
		return relay.Result{}, nil
	})
	_, inHandler := relay.AgentFrom(context.Background())
	fmt.Println(inHandler)
	// Output: false
}
