package dashboard

import (
	"time"
	"unicode/utf8"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/memory"
)

// Frame types the server sends on the websocket (docs/protocol.md).
const (
	TypeHello         = "hello"          // first frame: sequence, epoch, workspace; snapshot or resume
	TypeAgent         = "agent"          // an agent joined or changed (state, pending, CLI, skipped)
	TypeMessage       = "message"        // a new message with its statuses (or, answering a request, its whole body)
	TypeReceipt       = "receipt"        // a message's status changed at one recipient
	TypeMemory        = "memory"         // a memory was saved or forgotten
	TypeScreen        = "screen"         // the selected agent's screen (live, not replayed)
	TypeSent          = "sent"           // answer to a send request
	TypeMemoryResults = "memory_results" // answer to a memory_search request
	TypeStopping      = "stopping"       // answer to a stop request (to: the agent, now ending)
	TypeAnswered      = "answered"       // answer to an approve request (to: the agent)
	TypeError         = "error"          // a request failed, or the feed has a problem
)

// Request types the client sends.
const (
	ReqSend         = "send"          // to, body: send as the human
	ReqMemorySearch = "memory_search" // query
	ReqSelect       = "select"        // agent: start (or, empty, stop) its screen feed
	ReqMessage      = "message"       // id: the whole body of a message
	ReqStop         = "stop"          // agent: end it gracefully, as relay stop does
	ReqApprove      = "approve"       // agent, id (the prompt), deny, reason: answer its prompt, as relay approve does
)

// MaxFrameBody is how much of a message's body a message frame carries;
// a longer body is cut (Message.Truncated) and sent whole on request.
const MaxFrameBody = 2000

// Frame is one JSON object the server sends. Type says which fields are
// set. Seq numbers the replayable frames (agent, message, receipt, memory)
// of one workspace, from 1 without gaps; the others carry none.
type Frame struct {
	Type string `json:"type"`
	Seq  uint64 `json:"seq,omitempty"`

	// hello
	Epoch      string   `json:"epoch,omitempty"`
	Workspace  string   `json:"workspace,omitempty"`
	Workspaces []string `json:"workspaces,omitempty"`
	Human      string   `json:"human,omitempty"`
	Snapshot   bool     `json:"snapshot,omitempty"`

	Agent   *bus.Presence `json:"agent,omitempty"`
	Message *Message      `json:"message,omitempty"`
	// Full marks a message frame that answers a message request.
	Full bool `json:"full,omitempty"`

	// receipt (and sent: ID, To)
	ID     string     `json:"id,omitempty"`
	Name   string     `json:"name,omitempty"` // the recipient reporting
	Status bus.Status `json:"status,omitempty"`
	Reason string     `json:"reason,omitempty"`
	At     time.Time  `json:"at,omitzero"` // when the recipient reached Status
	To     string     `json:"to,omitempty"`

	// memory
	Op      string         `json:"op,omitempty"` // save or forget
	Memory  *memory.Memory `json:"memory,omitempty"`
	Created bool           `json:"created,omitempty"`

	// memory_results
	Query   string          `json:"query,omitempty"`
	Results []memory.Result `json:"results,omitempty"`

	Screen *bus.Screen `json:"screen,omitempty"`

	// error (and a warning on sent)
	Request string `json:"request,omitempty"`
	Error   string `json:"error,omitempty"`
	Warning string `json:"warning,omitempty"`
}

// Message is a message of the feed: its envelope fields, its latest status
// at each recipient, and a body cut at MaxFrameBody unless asked in full.
type Message struct {
	ID        string                `json:"id"`
	From      string                `json:"from"`
	To        string                `json:"to"`
	Body      string                `json:"body"`
	Truncated bool                  `json:"truncated,omitempty"`
	Size      int                   `json:"size"` // of the whole body, in bytes
	Created   time.Time             `json:"created"`
	Thread    string                `json:"thread,omitempty"`
	ReplyTo   string                `json:"reply_to,omitempty"`
	Hops      int                   `json:"hops,omitempty"`
	Kind      bus.Kind              `json:"kind,omitempty"`
	Status    map[string]bus.Status `json:"status"`
	Reasons   map[string]string     `json:"reasons,omitempty"`
	Invalid   string                `json:"invalid,omitempty"`
	// Stages are every stage at every recipient with its time, in order
	// (an answer's text left out: it is a message of the feed itself).
	Stages []bus.Stage `json:"stages,omitempty"`
}

// Request is one JSON object a client sends.
type Request struct {
	Type  string `json:"type"`
	To    string `json:"to,omitempty"`
	Body  string `json:"body,omitempty"`
	Query string `json:"query,omitempty"`
	Agent string `json:"agent,omitempty"`
	ID    string `json:"id,omitempty"`
	// Deny and Reason are an approve's answer: refuse the prompt, why.
	Deny   bool   `json:"deny,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// toMessage turns a log entry into a feed message, its body cut at max
// bytes (on a character boundary) unless max is 0.
func toMessage(e bus.Entry, max int) *Message {
	m := &Message{
		ID: e.ID, From: e.From, To: e.To, Body: e.Body, Size: len(e.Body), Created: e.Created,
		Thread: e.Thread, ReplyTo: e.ReplyTo, Hops: e.Hops, Kind: e.Kind,
		Status: e.Status, Reasons: e.Reasons, Invalid: e.Invalid,
	}
	for _, st := range e.Stages {
		st.Answer = ""
		m.Stages = append(m.Stages, st)
	}
	if max > 0 && len(m.Body) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(m.Body[cut]) {
			cut--
		}
		m.Body, m.Truncated = m.Body[:cut], true
	}
	return m
}
