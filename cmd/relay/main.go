// Command relay lets coding agents that were never built to talk to each
// other work as a team. See README.md and docs/ for the user's guide.
//
// updatemaxprocs=0: the runtime would read the cgroup's CPU limit every
// second to update GOMAXPROCS, a wake-up a second for every idle wrapper.
//
//go:debug updatemaxprocs=0
package main

import (
	"os"

	"github.com/relayhq/relay/internal/cli"
	// First among the package inits: one copy of a shallow stack instead
	// of four of a deep one (internal/mainstack).
	_ "github.com/relayhq/relay/internal/mainstack"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.System()))
}
