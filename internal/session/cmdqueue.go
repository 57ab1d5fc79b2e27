package session

import (
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/mailbox"
	"github.com/relayhq/relay/internal/patterns"
)

// cmdQueue hands the commands the agent wrote to the handlers, in order.
// Put never blocks (the scanner's callback must not) and never drops: a
// burst of commands waits here until the handlers get to it. Once closed
// (the agent exited and its screen was read to the end), Get hands out
// what is left and then reports the end.
type cmdQueue = mailbox.Mailbox[patterns.Command]

func newCmdQueue() *cmdQueue { return mailbox.New[patterns.Command]() }

// commandStage hands the commands the agent wrote (on its screen, or in
// its exact text) to the handlers: any goroutine puts them in queue, one
// goroutine (handleCommands) takes them and closes done when the queue is
// closed and empty. damper is safe for concurrent use.
type commandStage struct {
	queue  *cmdQueue
	done   chan struct{}
	damper *delivery.Damper
}

func newCommandStage(d delivery.DamperOptions) commandStage {
	return commandStage{queue: newCmdQueue(), done: make(chan struct{}), damper: delivery.NewDamper(d)}
}
