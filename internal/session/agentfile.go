package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/nats-io/nuid"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/hookrpc"
	"github.com/relayhq/relay/internal/identity"
)

// The agent's own relay commands: the wrapper writes an identity file
// (internal/identity) for its child, names it in the child's environment,
// and answers `relay send` on a private socket, so that what the agent
// runs acts as the agent and goes through the same loop damping as its
// @relay: lines.

// SendEvent is the hookrpc event `relay send` calls inside an agent; its
// payload is a SendRequest, its answer's Stdout a SendReply.
const SendEvent = "relay-send"

// SendRequest is what `relay send` asks the wrapper to send.
type SendRequest struct {
	To   string `json:"to"`
	Body string `json:"body"`
}

// SendReply is the wrapper's answer: the message's id when it went out (or
// waits for the hub), else only a notice saying why not.
type SendReply struct {
	ID     string `json:"id,omitempty"`
	From   string `json:"from"`
	To     string `json:"to"`
	Sent   bool   `json:"sent"`
	Notice string `json:"notice,omitempty"`
}

// agentFile is the identity file and socket of the running agent.
type agentFile struct {
	mu   sync.Mutex
	path string
	srv  *hookrpc.Server
	f    identity.File
}

// hubAuth records how the session reached the hub, for the identity file.
func (a *agentFile) hubAuth(url, token, pin string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.f.Hub, a.f.Token, a.f.TLSPin = url, token, pin
}

// startAgentFile writes the identity file of agent name and serves its
// socket until ctx ends. It returns the child's environment entries.
func (s *Session) startAgentFile(ctx context.Context, name string) ([]string, error) {
	dir := filepath.Join(s.cfg.Home, "agents", s.cfg.Workspace, name)
	srv, err := hookrpc.Listen(filepath.Join(s.cfg.Home, "run"))
	if err != nil {
		return nil, fmt.Errorf("agent socket: %w", err)
	}
	srv.ErrorLog = func(err error) { s.log.Warn("agent socket", "err", err) }
	a := &s.ident
	a.mu.Lock()
	a.path, a.srv = filepath.Join(dir, "identity.json"), srv
	a.f.Name, a.f.Workspace, a.f.SessionID, a.f.Socket = name, s.cfg.Workspace, s.sid, srv.Path()
	f, path := a.f, a.path
	a.mu.Unlock()
	if err := identity.Write(path, f); err != nil {
		srv.Close()
		return nil, err
	}
	go func() { _ = srv.Serve(ctx, s.serveAgent) }()
	return []string{identity.FileEnv + "=" + path}, nil
}

// rewriteAgentFile writes the identity file again (a new credential).
func (s *Session) rewriteAgentFile() {
	a := &s.ident
	a.mu.Lock()
	f, path := a.f, a.path
	a.mu.Unlock()
	if path == "" {
		return
	}
	if err := identity.Write(path, f); err != nil {
		s.log.Warn("rewrite agent file", "err", err)
	}
}

// stopAgentFile closes the socket and removes the identity file.
func (s *Session) stopAgentFile() {
	a := &s.ident
	a.mu.Lock()
	srv, path := a.srv, a.path
	a.srv, a.path = nil, ""
	a.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
	if path != "" {
		os.Remove(path)
	}
}

// serveAgent answers the agent's own relay commands.
func (s *Session) serveAgent(ctx context.Context, req hookrpc.Request) hookrpc.Response {
	if req.Event != SendEvent {
		return hookrpc.Response{ExitCode: 2, Stdout: fmt.Sprintf("unknown request %q", req.Event)}
	}
	var sr SendRequest
	if err := json.Unmarshal(req.Payload, &sr); err != nil {
		return hookrpc.Response{ExitCode: 2, Stdout: "bad request: " + err.Error()}
	}
	reply := SendReply{From: s.name(), To: sr.To}
	msg := bus.Message{ID: nuid.Next(), To: sr.To, Body: sr.Body}
	if err := validTarget(sr.To); err != nil {
		reply.Notice = err.Error()
	} else if s.alone() {
		reply.Notice = "Not sent: this agent runs without a hub (--hub none)."
	} else {
		s.log.Info("relay send from the agent", "to", sr.To, "bytes", len(sr.Body))
		reply.Notice, reply.Sent = s.relayOut(ctx, msg)
	}
	if reply.Sent {
		reply.ID = msg.ID
	}
	b, _ := json.Marshal(reply)
	code := 0
	if !reply.Sent {
		code = 1
	}
	return hookrpc.Response{Stdout: string(b), ExitCode: code}
}

func validTarget(to string) error {
	if to == bus.Broadcast {
		return nil
	}
	if err := bus.ValidName("target", to); err != nil {
		return fmt.Errorf("Not sent: %s", strings.TrimPrefix(err.Error(), bus.ErrBadName.Error()+": "))
	}
	return nil
}
