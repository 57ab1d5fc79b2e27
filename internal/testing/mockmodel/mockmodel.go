// Package mockmodel fakes the model behind the real agent CLIs in tests:
// small HTTP servers (net/http/httptest) that speak the streaming wire
// protocols of Anthropic (Claude Code), OpenAI Responses (Codex) and Gemini
// (Gemini CLI), answer each model turn from a script, and log every request
// so that tests can assert what reached the model, and how often.
//
// Only the model is fake: the CLIs, their terminals and relay are real. Each
// CLI also makes side requests (titles, quota checks, token counts,
// complexity scores); the servers recognise and answer them harmlessly and
// log them with Turn false, so that "exactly once" assertions count model
// turns only.
//
// A server is started with NewAnthropic, NewResponses or NewGemini and
// stopped with Close; all three share the Log and the Reply script types.
package mockmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Request is one request a mock server received.
type Request struct {
	// Seq numbers all requests of one server from 1.
	Seq int
	// Turn is the 1-based number of the model turn this request is, or 0
	// for a side request (title, quota check, token count, utility call).
	Turn int
	// Kind names what the request was: "turn", or the side request's kind
	// ("title", "quota", "count_tokens", "utility", "other").
	Kind string
	// Method and Path are the HTTP method and URL path (with query).
	Method, Path string
	// Model is the model named in the request, if any.
	Model string
	// LastUser is the text of the last user message, its content blocks
	// flattened and joined with newlines (tool results included).
	LastUser string
	// Tools names the tools the request offers (CallTool, FindTool).
	Tools []string
	// Body is the request body as sent.
	Body json.RawMessage
	// Time is when the request arrived.
	Time time.Time
	// Replied is when the answer to a model turn was completely sent; zero
	// while it is still streaming, if the client went away first, and for
	// side requests.
	Replied time.Time
}

// IsTurn reports whether the request is a model turn (not a side request).
func (r Request) IsTurn() bool { return r.Turn > 0 }

// Reply is the script for one model turn.
type Reply struct {
	// Text is the assistant's text, streamed in chunks.
	Text string
	// ToolUse, when set, follows the text with one tool call; the CLI runs
	// the tool and comes back with its result as a new turn.
	ToolUse *ToolUse
	// Delay waits before the text starts (after the stream opened).
	Delay time.Duration
	// Gate, when not nil, holds the reply after the stream opened until it
	// is closed (or the request is cancelled): the CLI stays busy as long as
	// the test wants.
	Gate <-chan struct{}
	// Chunk is the number of bytes per streamed text piece (cut at rune
	// boundaries); 0 means 24.
	Chunk int
	// ChunkDelay waits between pieces; 0 sends them back to back.
	ChunkDelay time.Duration
}

// ToolUse is one tool call in a reply.
type ToolUse struct {
	// ID names the call; empty means a generated one.
	ID string `json:"id,omitempty"`
	// Name is the tool: "Bash" for Claude Code (Input {"command": "true",
	// "description": "…"}), "exec_command" for Codex 0.169.0 (Input
	// {"cmd": "true"}), "run_shell_command" for Gemini CLI.
	Name string `json:"name"`
	// Input is the tool's arguments.
	Input map[string]any `json:"input"`
}

// Script chooses the reply for each model turn. It is called once per turn,
// from the server's handler goroutine.
type Script func(Request) Reply

// Queue returns a Script that answers the turns in order with replies and
// then with Reply{Text: "OK."}. It is safe for concurrent use.
func Queue(replies ...Reply) Script {
	var mu sync.Mutex
	next := 0
	return func(Request) Reply {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(replies) {
			return Reply{Text: "OK."}
		}
		next++
		return replies[next-1]
	}
}

// Fixed returns a Script that answers every turn with text.
func Fixed(text string) Script {
	return func(Request) Reply { return Reply{Text: text} }
}

// Options configure a mock server; the zero value answers every turn "OK.".
type Options struct {
	// Script answers model turns; nil means Fixed("OK.").
	Script Script
	// Model is the model name reported in responses; empty means the
	// requested one.
	Model string
}

func (o Options) script() Script {
	if o.Script == nil {
		return Fixed("OK.")
	}
	return o.Script
}

// Log records the requests of one server. Its methods are safe for
// concurrent use.
type Log struct {
	mu      sync.Mutex
	reqs    []Request
	turns   int
	changed chan struct{} // closed and replaced on every append
}

func newLog() *Log { return &Log{changed: make(chan struct{})} }

// add appends r, numbering it; turn says whether it is a model turn.
func (l *Log) add(r Request, turn bool) Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.Seq = len(l.reqs) + 1
	if turn {
		l.turns++
		r.Turn = l.turns
		r.Kind = "turn"
	}
	l.reqs = append(l.reqs, r)
	close(l.changed)
	l.changed = make(chan struct{})
	return r
}

// replied marks request seq as completely answered, if it is a model turn.
func (l *Log) replied(seq int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq >= 1 && seq <= len(l.reqs) && l.reqs[seq-1].IsTurn() {
		l.reqs[seq-1].Replied = time.Now()
		close(l.changed)
		l.changed = make(chan struct{})
	}
}

// WaitReplied waits until the answer to model turn n has been completely
// sent, and returns that turn.
func (l *Log) WaitReplied(ctx context.Context, n int) (Request, error) {
	return l.WaitFor(ctx, func(r Request) bool { return r.Turn == n && !r.Replied.IsZero() },
		fmt.Sprintf("the complete reply to turn %d", n))
}

// All returns every request so far, side requests included, in order.
func (l *Log) All() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Request(nil), l.reqs...)
}

// Turns returns the model turns so far, in order.
func (l *Log) Turns() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Request
	for _, r := range l.reqs {
		if r.IsTurn() {
			out = append(out, r)
		}
	}
	return out
}

// Count returns how many model turns had a last user message containing s.
func (l *Log) Count(s string) int {
	n := 0
	for _, r := range l.Turns() {
		if strings.Contains(r.LastUser, s) {
			n++
		}
	}
	return n
}

// WaitForRequest waits until a model turn whose last user message contains
// s has arrived (earlier ones count) and returns the first such turn. It
// fails when ctx ends, naming the last user messages it saw.
func (l *Log) WaitForRequest(ctx context.Context, s string) (Request, error) {
	return l.WaitFor(ctx, func(r Request) bool { return r.IsTurn() && strings.Contains(r.LastUser, s) },
		fmt.Sprintf("a model turn containing %q", s))
}

// WaitForTurns waits until at least n model turns have arrived and returns
// the n-th.
func (l *Log) WaitForTurns(ctx context.Context, n int) (Request, error) {
	seen := 0
	return l.WaitFor(ctx, func(r Request) bool {
		if r.IsTurn() {
			seen++
		}
		return seen >= n
	}, fmt.Sprintf("%d model turns", n))
}

// WaitFor waits until a request (side requests included) satisfies match
// and returns the first that does; what names it in the error. match sees
// the requests in order from the first on every check.
func (l *Log) WaitFor(ctx context.Context, match func(Request) bool, what string) (Request, error) {
	for {
		l.mu.Lock()
		reqs := append([]Request(nil), l.reqs...)
		changed := l.changed
		l.mu.Unlock()
		for _, r := range reqs {
			if match(r) {
				return r, nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Request{}, fmt.Errorf("mock model: waiting for %s: %w; turns seen: %s", what, ctx.Err(), l.summary())
		}
	}
}

// summary lists the last user message of each turn, shortened, for errors.
func (l *Log) summary() string {
	var b strings.Builder
	for _, r := range l.Turns() {
		s := r.LastUser
		if len(s) > 120 {
			s = s[:120] + "…"
		}
		fmt.Fprintf(&b, "\n  turn %d: %q", r.Turn, s)
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// chunks cuts s into pieces of about n bytes at rune boundaries.
func chunks(s string, n int) []string {
	if n <= 0 {
		n = 24
	}
	var out []string
	for len(s) > 0 {
		end := n
		if end >= len(s) {
			end = len(s)
		} else {
			for end < len(s) && !isRuneStart(s[end]) {
				end++
			}
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// wait sleeps for d and then waits for gate, returning early with false when
// ctx ends.
func wait(ctx context.Context, d time.Duration, gate <-chan struct{}) bool {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// pause waits d between chunks; false when ctx ended.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	return wait(ctx, d, nil)
}
