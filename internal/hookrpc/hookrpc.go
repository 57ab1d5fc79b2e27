// Package hookrpc is the private channel between `relay hook EVENT` (a
// short-lived process that Claude Code starts for each of its hooks) and the
// `relay wrap` process that runs that Claude Code: a Unix socket in a
// private 0700 folder, mode 0600, whose path the wrapper hands to its child
// in the environment (RELAY_HOOK_SOCKET).
//
// One connection carries one exchange, each side one JSON value:
//
//	relay hook → wrapper   Request  {"event", "payload", "deadline"}
//	wrapper → relay hook   Response {"stdout", "exit_code"}
//	relay hook → wrapper   one ack byte once the response was read
//
// The ack lets the wrapper learn (Response.Sent) whether what it answered
// reached the hook process, e.g. before it counts messages handed over at
// Stop as delivered. When the hook process gives up first (its time limit),
// the handler's context is cancelled.
package hookrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// SocketEnv names the environment variable through which a wrapper tells
// the `relay hook` processes of its agent where its socket is.
const SocketEnv = "RELAY_HOOK_SOCKET"

// Time limits of `relay hook`, from its start to the wrapper's answer.
// Past them it prints nothing and exits 0, so that Claude Code is never
// held up by a wrapper that is gone or stuck.
const (
	// StopTimeout is Stop's: the wrapper may hold Stop briefly to hand
	// the messages waiting for its agent over as the hook's answer.
	StopTimeout = 5 * time.Second
	// Timeout is every other event's: the wrapper only takes note.
	Timeout = 2 * time.Second
	// PreToolUseTimeout is PreToolUse's (Claude Code) and BeforeTool's
	// (Gemini CLI): the wrapper runs the user's BeforeToolCall hooks,
	// which may take as long as a hook may (past it, the tool call goes
	// on).
	PreToolUseTimeout = 60 * time.Second
	// PermissionTimeout is PermissionRequest's (Claude Code): the wrapper
	// holds the hook while the permission dialog waits, to answer it with
	// `relay approve`; past it, the dialog is the human's alone.
	PermissionTimeout = time.Hour
)

// Limit returns the time limit of event: StopTimeout for Stop and
// SubagentStop, PreToolUseTimeout for PreToolUse and BeforeTool,
// PermissionTimeout for PermissionRequest, else Timeout.
func Limit(event string) time.Duration {
	switch event {
	case "Stop", "SubagentStop":
		return StopTimeout
	case "PreToolUse", "BeforeTool":
		return PreToolUseTimeout
	case "PermissionRequest":
		return PermissionTimeout
	}
	return Timeout
}

// MaxPayload caps the hook's stdin JSON that a Request may carry. Claude
// Code's payloads are small (the longest field is last_assistant_message),
// so a larger one is a mistake rather than data to keep.
const MaxPayload = 4 << 20

// MaxStdout caps Response.Stdout, what `relay hook` prints for Claude Code.
const MaxStdout = 4 << 20

// ErrTooLarge is returned when a payload or a response is over its cap.
var ErrTooLarge = errors.New("too large")

// Request is what `relay hook` sends: the event's name and the hook's stdin
// JSON as is.
type Request struct {
	// Event is the hook event, e.g. "Stop" (the argument of `relay hook`).
	Event string `json:"event"`
	// Payload is the JSON Claude Code wrote on the hook's stdin.
	Payload json.RawMessage `json:"payload"`
	// Deadline is when the hook process stops waiting (zero: unknown);
	// the server gives the handler a context that ends a little earlier.
	Deadline time.Time `json:"deadline,omitzero"`
}

// Response is what `relay hook` prints on stdout and exits with.
type Response struct {
	// Stdout is printed as is (Claude Code reads JSON such as
	// {"decision":"block","reason":"…"} from it); empty prints nothing.
	Stdout string `json:"stdout,omitempty"`
	// ExitCode is the hook's exit status: 0 success, 2 blocks the event
	// (Claude Code then reads stderr, which relay hook leaves empty).
	ExitCode int `json:"exit_code,omitempty"`
	// Sent, when not nil, is called by the server once the exchange is
	// over: with nil when the hook process confirmed it read the response,
	// else with the reason it may not have (it gave up, or went away). It
	// is not sent over the wire.
	Sent func(err error) `json:"-"`
}

// deadlineMargin is how much earlier than the client's deadline the
// handler's context ends, leaving time to write the response.
const deadlineMargin = 100 * time.Millisecond

// ack is the byte the client writes once it has read the response (ASCII
// ACK; JSON whitespace before it is skipped).
const ack = 0x06

// readJSON decodes one JSON value of at most limit bytes from r into v.
// It returns the reader positioned after the value (buffered bytes
// included).
func readJSON(r io.Reader, limit int64, v any, what string) (io.Reader, error) {
	lr := &io.LimitedReader{R: r, N: limit + 1}
	dec := json.NewDecoder(lr)
	if err := dec.Decode(v); err != nil {
		if lr.N <= 0 {
			return nil, fmt.Errorf("read %s: over %d bytes: %w", what, limit, ErrTooLarge)
		}
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return io.MultiReader(dec.Buffered(), r), nil
}
