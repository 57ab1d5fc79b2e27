package agents

import (
	"context"
	"log/slog"
	"time"

	"github.com/relayhq/relay/internal/patterns"
)

// Launch is what a profile learns about one session before its agent
// starts, to prepare the CLI's exact-text path.
type Launch struct {
	Command string   // the program, as the user named it
	Args    []string // the user's arguments
	Env     []string // the child's environment (KEY=VALUE), RELAY_* included
	Dir     string   // the child's working folder, symbolic links resolved
	Home    string   // relay's state folder (RELAY_HOME)
	// RelayBinary is the relay program that a CLI's hooks can run; "" when
	// there is none (a Go program embedding relay, no relay on PATH).
	RelayBinary string
	// Steer says messages may reach the model mid-turn (delivery mode steer).
	Steer bool
	// BeforeToolCall says the session has BeforeToolCall handlers: a CLI
	// whose hooks can hold a tool call asks Sink.BeforeToolCall first.
	BeforeToolCall bool
	// MCP, when set, is relay's MCP server for this session, for the
	// profile to register with its CLI; nil leaves it out (mcp = false).
	MCP     *MCPServer
	Started time.Time
	Log     *slog.Logger
}

// Setup is what a profile adds to one session.
type Setup struct {
	Args   []string // put before the user's arguments
	Env    []string // added to the child's environment
	Source Source   // nil: the screen gives the commands
}

// Source is an agent's exact text beside its screen: Claude Code's hooks
// and transcript, Codex's rollout file, Gemini CLI's chat transcript. It
// gives the commands from the markdown the model wrote (escapes, fences and
// all) where the screen shows it rendered, and may report the agent's turns
// exactly. A Source's methods are safe for concurrent use.
type Source interface {
	// Run follows the source until ctx ends, reporting to sink.
	Run(ctx context.Context, sink Sink) error
	// Screen is given each command the screen saw: true when the source
	// keeps it (it gives, or may still give, the same command exactly),
	// false when the screen is the source.
	Screen(c patterns.Command) bool
	// Active reports whether the source gives the commands now.
	Active() bool
	// Idle tells the source that the agent's turn ended: read now.
	Idle()
}

// Turn is an agent's state as its exact path reports it.
type Turn struct {
	// Exact says the source now reports turns (and commands) itself: busy
	// and waiting come from it, not from the screen. False hands both back
	// to the screen.
	Exact   bool
	Busy    bool
	Waiting bool // on its human (a permission prompt)
	// Ask is the prompt the agent waits on, when Waiting and the source
	// knows it; nil otherwise.
	Ask *Ask
}

// The session offers a Source three small interfaces, one for each kind
// of source, joined in Sink: a Source's Run gets the whole Sink and keeps
// the part it uses. Their methods are safe for concurrent use and return
// quickly.

// TextSink takes the exact text every source reads.
type TextSink interface {
	// Texts hands over exact assistant texts, in order: their commands
	// fire, their lines are Output.
	Texts(texts []string)
	// Prompted records prompts that reached the model (confirms typing).
	Prompted(prompts []string)
}

// FileSink is what a source that reads the CLI's own session file (a
// Follower) needs besides the texts.
type FileSink interface {
	TextSink
	// Commands hands back screen commands the source held and will not
	// give itself: they fire as the screen saw them.
	Commands(cmds []patterns.Command)
	// Idle reports whether the agent's turn has ended.
	Idle() bool
	// Pid is the agent's process id.
	Pid() int
}

// HookSink is what a source fed by the CLI's hooks or extension (Claude
// Code, Gemini CLI, pi) needs besides the texts: the turns it reports, the
// tool calls it can hold, the messages it can hand to the model.
type HookSink interface {
	TextSink
	// Turn reports the agent's state.
	Turn(t Turn)
	// ToolCall reports a tool the agent called (after it ran).
	ToolCall(ctx context.Context, tool string, input []byte)
	// BeforeToolCall asks the session's BeforeToolCall handlers about a
	// tool the agent is about to call (sources whose CLI can hold one).
	BeforeToolCall(ctx context.Context, tool string, input []byte) ToolVerdict
	// HandOver takes what waits to be typed into the agent, for a hook
	// that can give it to the model directly; done reports whether it got
	// there (an error puts it back). ok is false when nothing waits.
	HandOver() (text string, done func(error), ok bool)
	// Go runs f in the session's goroutine group: a panic restores the
	// human's terminal, and the session waits for f before it ends.
	Go(f func())
}

// Sink receives what a Source reads: everything the session offers.
type Sink interface {
	FileSink
	HookSink
}

// ToolVerdict is what BeforeToolCall handlers made of a tool call: Block
// refuses it (Reason reaches the model); Context, when not empty, is
// given to the model beside the call.
type ToolVerdict struct {
	Block   bool
	Reason  string
	Context string
}

// Probe is what relay doctor knows of one installed CLI.
type Probe struct {
	Path        string   // the CLI's executable
	Version     string   // what --version printed first
	Env         []string // the environment it would run with
	RelayBinary string   // the relay its hooks would run; "" when none
	// Home is relay's state folder (RELAY_HOME), where relay wrap writes
	// the files it points a CLI at; "" when unknown.
	Home string
}

// Diagnosis is what relay doctor says of one CLI beyond its version.
type Diagnosis struct {
	ExactText string // where relay reads its exact text
	State     string // where relay reads busy and idle; "" means the screen
	// MCP says whether and how relay wrap registers relay's MCP server
	// (the team's tools) with this CLI; "" means it does not.
	MCP     string
	Problem string // what is wrong, "" when nothing
	Fix     string // how to fix Problem
}

// Deliverer is a Source that can give its CLI's model a prompt through the
// CLI's own input path (OpenCode's server), without typing into its
// terminal: the human's draft there is never touched. The session then
// delivers through it whenever Direct says it can, and types otherwise.
type Deliverer interface {
	// Direct reports whether Deliver can be tried now: the path is up
	// and knows the session to post to. It is quick and safe for
	// concurrent use.
	Direct() bool
	// Deliver gives text to the model as one prompt. nil means the CLI
	// accepted it; an error means it did not, and nothing of it reached
	// the model (an answer lost on the way is asked again, under the same
	// message id, never posted twice), so the caller may type it. A
	// failure makes Direct false for a while.
	Deliver(ctx context.Context, text string) error
}

// Answering is a Deliverer that reads from its CLI's record whether a
// prompt waits for its answer. OpenCode answers only the last of the
// prompts that reach it before its run reads the conversation: the session
// gives it nothing while one waits (Answering), nor, after the human
// submitted a line, before that prompt is in the record (HumanPromptSince)
// or a while has passed.
type Answering interface {
	// Answering reports whether the newest prompt waits for its answer.
	Answering() bool
	// HumanPromptSince reports whether the record holds a prompt not of
	// relay's stored at t or later.
	HumanPromptSince(t time.Time) bool
}
