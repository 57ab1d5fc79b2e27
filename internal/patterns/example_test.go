package patterns_test

import (
	"context"
	"fmt"

	"github.com/relayhq/relay/internal/patterns"
)

func Example() {
	reply := "I'll ask Bob.\n\n" +
		"@relay:Bob Please run the integration tests\n" +
		"and report the failures.\n\n" +
		"Mentioning @relay:Carol mid-line does nothing, nor does\n" +
		"\\@relay:Nobody (escaped) or a code block:\n" +
		"```\n@relay:Example not sent\n```\n" +
		"@deploy:staging Release v1.2.3\n"

	reg := patterns.NewRegistry()
	_ = reg.Handle("deploy", func(ctx context.Context, c patterns.Command) (patterns.Result, error) {
		return patterns.Result{Inject: "deploying " + c.Body + " to " + c.Target}, nil
	})
	for _, c := range patterns.ExtractText(reply, patterns.Options{Namespaces: reg.Namespaces()}) {
		fmt.Printf("@%s:%s %q\n", c.NS, c.Target, c.Body)
		if c.NS == "deploy" {
			res, _ := reg.Dispatch(context.Background(), c)
			fmt.Println(res[0].Inject)
		}
	}
	// Output:
	// @relay:Bob "Please run the integration tests and report the failures."
	// @deploy:staging "Release v1.2.3"
	// deploying Release v1.2.3 to staging
}
