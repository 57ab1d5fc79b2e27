package hooks

import "time"

// The payloads of the lifecycle events, as Set.Fire callers should pass
// them. Each is JSON on the hook's stdin (plus `hook_event_name` and
// `subject`), and each top-level text, number or boolean field is also an
// environment variable: `from` is RELAY_FROM, `message` is RELAY_MESSAGE.

// Session is what every event carries about the session that fired it.
type Session struct {
	Agent     string `json:"agent"`      // RELAY_AGENT
	SessionID string `json:"session_id"` // RELAY_SESSION_ID
	Workspace string `json:"workspace"`  // RELAY_WORKSPACE
	Cwd       string `json:"cwd"`        // RELAY_CWD: the agent's working folder
	// RecentOutput is the agent's last lines (what it wrote, never what
	// relay or the human typed) and RecentMessages its last messages
	// received or sent, oldest first (JSON only).
	RecentOutput   []string        `json:"recent_output,omitzero"`
	RecentMessages []RecentMessage `json:"recent_messages,omitzero"`
}

// RecentMessage is a message of Session.RecentMessages.
type RecentMessage struct {
	ID   string    `json:"id"`
	From string    `json:"from"`
	To   string    `json:"to"`
	Body string    `json:"message"`
	At   time.Time `json:"at"`
}

// SessionStartPayload is SessionStart's (subject: the profile name).
type SessionStartPayload struct {
	Session
	Profile string   `json:"profile"`
	Command []string `json:"command"` // the wrapped command line (JSON only)
}

// SessionEndPayload is SessionEnd's (subject: the exit status, "0", after
// the agent exited; "stop" when relay stop ends the session, before the
// agent exits: then what the hook prints is typed in).
type SessionEndPayload struct {
	Session
	ExitCode int    `json:"exit_code"`
	Reason   string `json:"reason"` // "stop" or "exit"
}

// OutputPayload is Output's (subject: the line).
type OutputPayload struct {
	Session
	Line string `json:"line"`
}

// IdlePayload is Idle's (subject: the agent's name).
type IdlePayload struct {
	Session
}

// MessagePayload is MessageReceived's (subject: the sender) and
// MessageSent's (subject: the target, "*" for all). A MessageReceived hook
// may answer `{"message": "…"}` to rewrite Message, `{"hold": true}` to
// keep it queued, or exit 2 to refuse it.
type MessagePayload struct {
	Session
	ID      string `json:"id"`
	From    string `json:"from"`
	To      string `json:"to"`
	Message string `json:"message"`
	Thread  string `json:"thread,omitempty"`
}

// BlockedPayload is Blocked's (subject: the tool's name): a permission
// prompt of the agent waits for its human. Every field is the agent's
// text: a hook reads it from stdin or the environment, never runs it.
type BlockedPayload struct {
	Session
	Tool   string `json:"tool"`
	Input  any    `json:"input,omitempty"` // the tool's input (JSON only)
	Detail string `json:"detail"`          // what the human is asked: the command, the file (RELAY_DETAIL)
}

// ToolCallPayload is ToolCall's (subject: the tool's name).
type ToolCallPayload struct {
	Session
	Tool  string `json:"tool"`
	Input any    `json:"input,omitempty"` // the tool's input as the agent reported it (JSON only)
}
