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
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.System()))
}
