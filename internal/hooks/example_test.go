package hooks_test

import (
	"context"
	"fmt"

	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/hooks"
)

// A string command is run by sh -c exactly as written; the message reaches
// it through the environment (and stdin), so shell syntax in it is text.
func ExampleRun() {
	out, err := hooks.Run(context.Background(),
		hooks.Command{Shell: `echo "deploying: $RELAY_MESSAGE"`},
		nil, map[string]string{"RELAY_MESSAGE": "v1.2.3 $(rm -rf /)"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Inject)
	// Output: deploying: v1.2.3 $(rm -rf /)
}

// A handler that exits 2 refuses, and its stderr is the reason.
func ExampleNamespace_Handle() {
	ns := hooks.NewNamespace(config.Pattern{
		Name:    "deploy",
		Command: config.Command{Shell: `[ "$RELAY_TARGET" = prod ] && { echo "prod is frozen" >&2; exit 2; }; echo "Deployed to $RELAY_TARGET"`},
		Inject:  true,
	}, nil)
	for _, target := range []string{"staging", "prod"} {
		out, err := ns.Handle(context.Background(), hooks.Match{Namespace: "deploy", Target: target, Agent: "alice"})
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: inject %q, blocked %v %q\n", target, out.Inject, out.Block, out.Reason)
	}
	// Output:
	// staging: inject "Deployed to staging", blocked false ""
	// prod: inject "", blocked true "prod is frozen"
}
