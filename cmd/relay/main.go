// Command relay lets coding agents that were never built to talk to each
// other work as a team. See README.md and docs/ for the user's guide.
package main

import (
	"os"

	"github.com/relayhq/relay/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.System()))
}
