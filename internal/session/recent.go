package session

import (
	"strings"
	"sync"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/handler"
)

// How much context every event carries.
const (
	recentLines    = 20 // the agent's last output lines
	recentMessages = 10 // the last messages it received or sent
)

// RecentMessage is a message the agent received or sent, as events carry
// it (EventInfo.RecentMessages).
type RecentMessage = handler.Message

// recent keeps the last lines the agent wrote (never what relay or the
// human typed) and the last messages it received or sent, for the
// context of every event. It is safe for concurrent use.
type recent struct {
	mu    sync.Mutex
	lines []string
	msgs  []RecentMessage
}

// addLines records lines the agent wrote; blank ones are skipped.
func (r *recent) addLines(lines []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			r.lines = append(r.lines, l)
		}
	}
	if n := len(r.lines); n > recentLines {
		r.lines = append(r.lines[:0:0], r.lines[n-recentLines:]...)
	}
}

// addMessage records a message received or sent.
func (r *recent) addMessage(env bus.Envelope) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := RecentMessage{ID: env.ID, From: env.From, To: env.To, Body: env.Body, At: env.Created}
	if len(r.msgs) < recentMessages {
		r.msgs = append(r.msgs, m)
		return
	}
	// Full: shift in place, so that a stream of messages allocates nothing
	// here (it copied the ten for every message).
	copy(r.msgs, r.msgs[1:])
	r.msgs[len(r.msgs)-1] = m
}

// snapshot returns copies of both, oldest first.
func (r *recent) snapshot() ([]string, []RecentMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...), append([]RecentMessage(nil), r.msgs...)
}
