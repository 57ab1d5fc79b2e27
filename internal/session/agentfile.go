package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/identity"
	"github.com/relayhq/relay/internal/statedir"
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
	// issuing counts the credential requests under way (issueAside):
	// revokeCredential waits for them, so that no credential is issued
	// after the agent left.
	issuing sync.WaitGroup
}

// hubAuth records how the agent reaches the hub, for the identity file:
// its own credential (cred.Token empty when the hub issues none).
func (a *agentFile) hubAuth(url, pin string, cred hub.Credential) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.f.Hub, a.f.TLSPin, a.f.Token, a.f.InboxPrefix = url, pin, cred.Token, cred.InboxPrefix
}

// credential records the agent's own credential, issued by the hub at url;
// one from a hub the agent no longer uses (a later connection's) is not
// recorded.
func (a *agentFile) credential(url string, cred hub.Credential) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f.Hub == url {
		a.f.Token, a.f.InboxPrefix = cred.Token, cred.InboxPrefix
	}
}

// issueAside asks the hub for agent name's own credential beside what
// follows the claim (the child's start): the identity file is written
// again when it comes. Nothing before the child needs it (the agent's
// relay commands find the hub as any command does until then, as in an
// overlapped start), and the hub writes its credentials file before it
// answers: the slowest round trip of a start (issue 34).
func (s *Session) issueAside(c *bus.Client, name, url string) {
	a := &s.link.ident
	a.issuing.Add(1)
	s.grp.Go(func() {
		defer a.issuing.Done()
		a.credential(url, s.issueCredential(c, name))
		if s.end.ended.Load() || s.childGone() {
			// The agent exited meanwhile: nothing reads the file again,
			// which goes with the session, and the credential recorded
			// is revoked (closeAll). Writing it would delay that exit.
			return
		}
		a.rewrite(s.log)
	})
}

// credentialTimeout bounds a credential request to the hub.
const credentialTimeout = 2 * time.Second

// issueCredential asks the hub for the agent's own credential. A hub that
// issues none (an external NATS server, an older hub) gives the agent
// none: its relay commands then find the hub as any command does.
func (s *Session) issueCredential(c *bus.Client, name string) hub.Credential {
	req, _ := json.Marshal(hub.CredentialRequest{Workspace: s.cfg.Workspace, Name: name})
	m, err := c.Conn().Request(hub.IssueSubject, req, credentialTimeout)
	var cred hub.Credential
	if err == nil {
		err = json.Unmarshal(m.Data, &cred)
	}
	if err == nil && cred.Error != "" {
		err = errors.New(cred.Error)
	}
	if err != nil {
		s.log.Info("the hub issued no credential for the agent", "err", err)
		return hub.Credential{}
	}
	return cred
}

// revokeCredential tells the hub that the agent left: its credential
// stops working and the connections made with it are closed. It is
// published, not asked: the client's Close, which follows, waits until the
// hub has read it (one round trip for the whole exit, issue 34).
func (s *Session) revokeCredential(c *bus.Client) {
	s.link.ident.issuing.Wait() // bounded by credentialTimeout
	s.link.ident.mu.Lock()
	had := s.link.ident.f.Token != ""
	s.link.ident.f.Token = ""
	s.link.ident.mu.Unlock()
	if !had || !c.Conn().IsConnected() {
		return
	}
	req, _ := json.Marshal(hub.CredentialRequest{Workspace: s.cfg.Workspace, Name: s.name()})
	if err := c.Conn().Publish(hub.RevokeSubject, req); err != nil {
		s.log.Warn("revoke the agent's credential", "err", err)
	}
}

// startAgentFile writes the identity file of agent name and serves its
// socket until ctx ends. It returns the child's environment entries.
func (s *Session) startAgentFile(ctx context.Context, name string) ([]string, error) {
	dir, err := statedir.EnsureSub(s.cfg.Home, "agents", s.cfg.Workspace, name)
	if err != nil {
		return nil, fmt.Errorf("agent folder: %w", err)
	}
	run, err := statedir.EnsureSub(s.cfg.Home, "run")
	if err != nil {
		return nil, fmt.Errorf("agent socket: %w", err)
	}
	srv, err := hookrpc.Listen(run)
	if err != nil {
		return nil, fmt.Errorf("agent socket: %w", err)
	}
	srv.ErrorLog = func(err error) { s.log.Warn("agent socket", "err", err) }
	path := filepath.Join(dir, "identity.json")
	a := &s.link.ident
	a.mu.Lock()
	a.path, a.srv = path, srv
	a.f.Name, a.f.Workspace, a.f.SessionID, a.f.Socket = name, s.cfg.Workspace, s.spec.sid, srv.Path()
	// Written under the lock: a claim answered beside the starting child
	// rewrites the file with the credential, and the later write wins.
	err = identity.Write(a.path, a.f)
	a.mu.Unlock()
	if err != nil {
		srv.Close()
		return nil, err
	}
	s.grp.Go(func() { _ = srv.Serve(ctx, s.serveAgent) })
	return []string{identity.FileEnv + "=" + path}, nil
}

// rewrite writes the identity file again (a new credential).
func (a *agentFile) rewrite(log *slog.Logger) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.path == "" {
		return
	}
	if err := identity.Write(a.path, a.f); err != nil {
		log.Warn("rewrite agent file", "err", err)
	}
}

// close closes the socket and removes the identity file.
func (a *agentFile) close() {
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
	msg := bus.Message{ID: bus.NewID(), To: sr.To, Body: sr.Body}
	if n := badTarget(sr.To); n != "" {
		reply.Notice = n
	} else if s.alone() {
		reply.Notice = "Not sent: this agent runs without a hub (--hub none)."
	} else if !s.claimed(ctx) {
		reply.Notice = "Not sent: this agent's session was refused (its name is taken)."
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

// badTarget returns a notice when to is neither an agent name nor "*".
func badTarget(to string) string {
	if to == bus.Broadcast {
		return ""
	}
	if err := bus.ValidName("target", to); err != nil {
		return "Not sent: " + strings.TrimPrefix(err.Error(), bus.ErrBadName.Error()+": ")
	}
	return ""
}
