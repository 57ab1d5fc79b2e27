package session

import (
	"errors"
	"fmt"
	"sync"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/termsafe"
	"github.com/relayhq/relay/internal/wrapper"
)

// humanLines says relay's own lines to the human while the agent runs:
// through the wrapper, between two reads of the agent's output, once the
// wrapper has started; on stderr before that.
type humanLines struct {
	mu sync.Mutex
	ws *wrapper.Session
}

func (h *humanLines) attach(ws *wrapper.Session) {
	h.mu.Lock()
	h.ws = ws
	h.mu.Unlock()
}

// tell says line (relay's words, made safe by the caller) to the human.
func (s *Session) tell(line string) {
	h := &s.child.human
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ws != nil {
		h.ws.Tell(line)
		return
	}
	fmt.Fprintln(s.stderr(), line)
}

// hubRefused is the bus client's OnRefused: the hub closed the connection
// of agent name for its credentials (revoked, or refused when it
// reconnected), and will not take it back. The agent goes on running, cut
// off from its team; the human is told once what happened and what to do,
// and the log says it at ERROR.
func (s *Session) hubRefused(name string, err error) {
	if s.link.cut.Swap(true) {
		return
	}
	s.log.Error("the hub refused this agent's credentials: cut off from the team", "agent", name, "err", err)
	s.tell(refusedLine(name, s.cfg.Workspace, err))
}

// refusedLine is what the human reads when the hub refused agent name's
// credentials.
func refusedLine(name, ws string, err error) string {
	n, w := termsafe.Line(name), termsafe.Line(ws)
	if errors.Is(err, bus.ErrRevoked) {
		return fmt.Sprintf("relay: the hub revoked %s's credentials: %s keeps running but is cut off from workspace %s (nothing in or out). "+
			"Get new credentials (relay creds issue %s) and start relay wrap again with them.", n, n, w, n)
	}
	return fmt.Sprintf("relay: the hub refused %s's credentials when it reconnected (%s): %s keeps running but is cut off from workspace %s (nothing in or out). "+
		"Check RELAY_CREDS or the token, and start relay wrap again.", n, termsafe.Line(err.Error()), n, w)
}
