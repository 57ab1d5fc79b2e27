// Package session is the runtime of one wrapped agent: a child in a pty
// (internal/wrapper), whose screen is read (internal/scanner) and whose
// stdin relay types into, joined to its team on the hub (bus).
//
// The session is a set of stages, each a type of its own; Session is their
// wiring (session.go):
//
//	child output ─► wrapper (the human's screen first) ─► tap ─► screen model (scanner) ─► screenPub
//	   scanner ─► commands seen on screen ─┐
//	   exact source (agents.Source: hooks, session files) ─► exact texts ─┴► commandStage ─► handlers
//	   handlers ─► hubLink's outbox (relay, broadcast) │ memory service │ user handlers ─► notices
//	hubLink ─► inboxStage (MessageReceived) ─► delivery queue ─► typingStage ─► wrapper.Input ─► child stdin
//	scanner state │ exact turns │ human's line ─► owner (state.go) ─► delivery queue, presenceStage, idleClock
//	owner │ idleClock │ hub verdicts ─► eventStage's jobs (Idle, Output, MessageSent handlers)
//	ending: relay stop, the child's exit, the last commands handled and the outbox flushed
//
// # Who owns what
//
// One goroutine, the owner (owner.run, state.go), confines the session's
// state: ready, busy, draft, waiting, the human's line, the last senders,
// the name and the hub's URL. No other goroutine touches a state; the
// stages send the owner functions (do, which does not wait, and read,
// which does), so state changes reach the delivery queue, the hub and the
// Idle clock in the order they happened.
//
// The owner rule covers the state only. Every other field belongs to a
// stage type, whose doc comment says how each of its fields is guarded:
// set before the stages start and read-only after (Session.cfg, spec,
// child, the queue and journal), confined to the stage's own goroutine
// (eventStage.lastScreen), an atomic, a channel closed once, or the
// stage's own lock. A stage reaches another through narrow arguments
// (a client getter, a logger, a function) where it runs on its own; the
// handlers, the inbox and typing, which need many stages, are methods of
// Session.
//
// # Goroutines
//
// Every goroutine of the session starts through its group (Session.grp, a
// termGroup: group.go), from the owner's at the start to the last flush
// of the outbox: a panic in any of them restores the human's terminal
// (once the wrapper has put it in raw mode) and goes on. None is started
// with a bare go statement. They run until the session's context ends,
// except those that end with their one task (a relay stop, a receipt's
// wait, a batch's lease, the outbox's last flush). docs/architecture.md
// lists them.
//
// # Hand-offs
//
// A hand-off that is a queue is an internal/mailbox (commandStage's
// commands, eventStage's jobs; the delivery queue is internal/delivery's).
// A mailbox.Signal in this package is a token, not a queue
// ("something changed: look again"; Notify leaves one): the presence
// stage's, the idle clock's, the watchdog's, the human's-line release's
// and the screen publisher's. What the reader then looks at is the latest
// value, never a backlog.
package session
