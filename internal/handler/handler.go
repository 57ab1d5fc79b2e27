// Package handler declares, once, what a command's or an event's handler
// is given and returns: the relay package names these types for its users
// (relay.Match, relay.Result, relay.Message, documented there), and the
// session runs the handlers with them.
package handler

import "time"

// Match is one command the agent wrote, as a handler sees it.
type Match struct {
	Namespace string // lower case, without "@" and ":"
	Target    string // what follows the colon, up to the first space
	Body      string
	Agent     string // the agent that wrote it
	SessionID string
	Workspace string
	// RecentOutput (the agent's last lines: what it wrote, never what
	// relay or the human typed) and RecentMessages (the last messages it
	// received or sent), oldest first, when it wrote the command.
	RecentOutput   []string
	RecentMessages []Message
}

// Message is a message an agent received or sent.
type Message struct {
	ID, From, To, Body string
	At                 time.Time
}

// Result is what a handler made of a command or an event.
type Result struct {
	// Inject is typed back into the agent (escapes and controls removed,
	// commands kept unless Neutralize is set), if not empty.
	Inject string
	// Stop ends the chain: later handlers of the namespace do not run.
	Stop bool
	// For MessageReceived: Block refuses the message (its sender gets a
	// failed receipt with Reason); Hold keeps it in the inbox for later;
	// Message, when not nil, replaces its text. For BeforeToolCall: Block
	// refuses the tool call, and Reason reaches the model.
	Block   bool
	Reason  string
	Hold    bool
	Message *string
	// Neutralize types Inject as a peer's text is typed: every
	// command-like "@word:" in it is neutralised (＠word:), so that the
	// agent cannot fire it by copying it. Set it when Inject passes on
	// text others wrote; by default a handler's text is the user's own
	// and keeps its commands, so that an agent that follows it to the
	// letter writes a line that fires.
	Neutralize bool
}
