package bus

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// MaxBody is the largest message body in bytes (64 KiB). Larger bodies are
// refused by Send and rejected on receipt.
const MaxBody = 64 << 10

// Kind tells a message from a notice the system sends to an agent.
type Kind string

// Kinds of envelope.
const (
	KindMessage Kind = "message" // written by an agent, a human or a script
	KindNotice  Kind = "notice"  // from relay itself (a failure, a held message)
)

// Envelope is one message as it travels, JSON-encoded, as documented in
// docs/protocol.md. A broadcast is stored once per recipient, each copy
// with the same envelope (To is "*").
type Envelope struct {
	// ID is unique per message; it is also the Nats-Msg-Id header that
	// JetStream de-duplicates on (with ".<agent>" appended for each copy of
	// a broadcast).
	ID        string `json:"id"`
	Workspace string `json:"workspace"`
	From      string `json:"from"`
	// To is the recipient's name, or "*" for every other agent.
	To   string `json:"to"`
	Body string `json:"body"`
	// Thread groups a conversation (the id of its first message);
	// ReplyTo is the id of the message this one answers.
	Thread  string `json:"thread,omitempty"`
	ReplyTo string `json:"reply_to,omitempty"`
	// Hops counts how many messages led to this one (0 for one a human or
	// an agent started); loop damping limits it.
	Hops    int       `json:"hops"`
	Created time.Time `json:"created"`
	Kind    Kind      `json:"kind,omitempty"`
	// Human marks a message sent by a human or a script (relay send) with
	// the administrator's token; From is then their user name. Only the
	// subject without a sender (InboxSubject), which agents' credentials
	// cannot publish to, may carry it.
	Human bool `json:"human,omitempty"`
}

// ErrInvalidEnvelope is wrapped by every reason an envelope is rejected.
var ErrInvalidEnvelope = errors.New("invalid envelope")

// ErrBodyTooLarge is returned for a body over MaxBody.
var ErrBodyTooLarge = errors.New("message body too large")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidEnvelope, fmt.Sprintf(format, args...))
}

// ParseEnvelope decodes and validates an envelope received from any
// client. The error says what was wrong; the envelope then holds what
// could be decoded (to tell the sender).
func ParseEnvelope(data []byte) (Envelope, error) {
	var e Envelope
	if !utf8.Valid(data) {
		_ = json.Unmarshal(data, &e) // best effort, to tell the sender
		return e, invalid("not valid UTF-8 (at byte %d)", invalidAt(data))
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return e, invalid("not a JSON envelope: %v", err)
	}
	if e.Kind == "" {
		e.Kind = KindMessage
	}
	return e, e.Validate()
}

func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// Validate checks the fields every envelope must have (id, workspace, from,
// to, body), their syntax, the body's size and encoding.
func (e *Envelope) Validate() error {
	for _, f := range []struct{ name, v string }{
		{"id", e.ID}, {"workspace", e.Workspace}, {"from", e.From}, {"to", e.To}, {"body", e.Body},
	} {
		if f.v == "" {
			return invalid("field %q is missing or empty", f.name)
		}
	}
	if err := ValidName("message id", e.ID); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidEnvelope, err)
	}
	if err := ValidName("workspace", e.Workspace); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidEnvelope, err)
	}
	if err := ValidName("sender", e.From); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidEnvelope, err)
	}
	if e.To != Broadcast {
		if err := ValidName("recipient", e.To); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidEnvelope, err)
		}
	}
	if len(e.Body) > MaxBody {
		return fmt.Errorf("%w: %w: %d bytes, the limit is %d", ErrInvalidEnvelope, ErrBodyTooLarge, len(e.Body), MaxBody)
	}
	if !utf8.ValidString(e.Body) {
		return invalid("body is not valid UTF-8")
	}
	if e.Hops < 0 {
		return invalid("hops is %d, must not be negative", e.Hops)
	}
	if e.Kind != "" && e.Kind != KindMessage && e.Kind != KindNotice {
		return invalid("kind %q is neither %q nor %q", e.Kind, KindMessage, KindNotice)
	}
	return nil
}
