//go:build !lean

package hub

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/relayhq/relay/internal/statedir"
)

// Per-agent credentials. The hub's NATS server authenticates every client
// with the hub's own authenticator (nats-server's CustomClientAuthentication,
// checked by the server at CONNECT): the workspace token is the
// administrator's and may do anything; an agent's credential, issued when
// its wrapper joins and revoked when it leaves, may only do what that
// agent may do (AgentPermissions), enforced by the server on every publish
// and subscribe. Revoking closes the connections made with it.
//
// Only the administrator's token may ask for credentials: requests go to
// IssueSubject and RevokeSubject, which no agent's permissions allow.

// AgentPermissions is what agent name of workspace ws may do with its own
// credential: send as itself (the inbox subjects with its name as sender),
// read its own inbox's consumer, read presence (its wrapper, with the
// administrator's token, writes it), use the memory service, and read the
// replies to its requests. Nothing else: no presence writes (a rollup on
// its own key could purge every key), no other inbox, no stream or
// consumer management, no claim answers, no credentials.
func AgentPermissions(ws, name string) *server.Permissions {
	kv := "KV_relay_presence_" + ws
	stream := "RELAY_" + ws
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			"relay." + ws + ".inbox.*." + name,
			"relay._memory.>",
			"$JS.API.INFO",
			"$JS.API.STREAM.INFO." + stream,
			"$JS.API.STREAM.INFO." + kv,
			"$JS.API.CONSUMER.CREATE." + kv, "$JS.API.CONSUMER.CREATE." + kv + ".>",
			"$JS.API.CONSUMER.DELETE." + kv + ".>",
			"$JS.API.CONSUMER.INFO." + kv + ".>",
			"$JS.API.DIRECT.GET." + kv, "$JS.API.DIRECT.GET." + kv + ".>",
			"$JS.API.STREAM.MSG.GET." + kv,
			"$JS.FC." + kv + ".>",
			// Every inbox's pending count, for relay agents: metadata only.
			"$JS.API.CONSUMER.INFO." + stream + ".*",
			"$JS.API.CONSUMER.MSG.NEXT." + stream + "." + name,
			"$JS.ACK." + stream + "." + name + ".>",
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{AgentInboxPrefix(ws, name) + ".>"}},
	}
}

// WrapperPermissions is what agent name's wrapper may do where it holds
// only that agent's credential (an external NATS deployment, `relay creds
// issue`): AgentPermissions, and the wrapper's own work for that one name:
// its presence key and the claim of its name, its inbox's durable consumer,
// receipts, its screen for the dashboard (and a viewer's ask for it), control requests addressed to it,
// and answers to the requests it receives (claims, control). Still nothing
// of any other agent: no other presence key, inbox, claim or sender name,
// and no stream management. The embedded hub's wrappers hold the
// administrator's token instead and need none of this.
func WrapperPermissions(ws, name string) *server.Permissions {
	p := AgentPermissions(ws, name)
	stream := "RELAY_" + ws
	p.Publish.Allow = append(p.Publish.Allow,
		"$KV.relay_presence_"+ws+"."+name,
		"relay."+ws+".claim."+name,
		"relay."+ws+".receipt.*",
		"relay."+ws+".screen."+name,
		"$JS.API.CONSUMER.CREATE."+stream+"."+name, "$JS.API.CONSUMER.CREATE."+stream+"."+name+".>",
		"$JS.API.CONSUMER.DURABLE.CREATE."+stream+"."+name,
		"$JS.API.CONSUMER.DELETE."+stream+"."+name,
		"$JS.API.CONSUMER.INFO."+stream+"."+name,
	)
	p.Subscribe.Allow = append(p.Subscribe.Allow,
		"relay."+ws+".claim."+name,
		"relay."+ws+".control."+name,
		"relay."+ws+".receipt.*",
		"relay."+ws+".screen."+name+".watch",
	)
	p.Response = &server.ResponsePermission{MaxMsgs: 1, Expires: time.Minute}
	return p
}

// agentCred is one issued credential.
type agentCred struct {
	ws, name, token string
	cids            map[uint64]struct{} // connections made with it
}

// auth is the hub's authenticator and credential registry.
type auth struct {
	admin string

	mu      sync.Mutex
	path    string // where the issued credentials are kept across restarts
	byToken map[string]*agentCred
	byAgent map[string]*agentCred // workspace + "." + name
	leaves  *leaves               // the invited leaf machines (leaf.go)
}

// newAuth returns the authenticator of a hub whose token is admin, with
// the credentials issued before a restart (kept in path, 0600): a wrapper
// that reconnects to the restarted hub does not ask again, and its agent's
// credential keeps working.
func newAuth(admin, path string) (*auth, error) {
	a := &auth{admin: admin, path: path, byToken: map[string]*agentCred{}, byAgent: map[string]*agentCred{}}
	b, err := statedir.ReadSecret(path)
	if errors.Is(err, os.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read agents' credentials: %w", err)
	}
	var saved []savedCred
	if err := json.Unmarshal(b, &saved); err != nil {
		return nil, fmt.Errorf("read agents' credentials %s: %w", path, err)
	}
	for _, s := range saved {
		ac := &agentCred{ws: s.Workspace, name: s.Name, token: s.Token, cids: map[uint64]struct{}{}}
		a.byToken[ac.token] = ac
		a.byAgent[ac.ws+"."+ac.name] = ac
	}
	return a, nil
}

// savedCred is one credential in the hub's agents file.
type savedCred struct {
	Workspace string `json:"workspace"`
	Name      string `json:"name"`
	Token     string `json:"token"`
}

// save writes the issued credentials; a.mu is held.
func (a *auth) save() error {
	saved := make([]savedCred, 0, len(a.byAgent))
	for _, ac := range a.byAgent {
		saved = append(saved, savedCred{Workspace: ac.ws, Name: ac.name, Token: ac.token})
	}
	b, _ := json.Marshal(saved)
	return writeFileAtomic(a.path, b)
}

// Check is nats-server's hook: the administrator's token gets every
// permission, an agent's credential its own.
func (a *auth) Check(c server.ClientAuthentication) bool {
	if c.Kind() == server.LEAF {
		return a.checkLeaf(c)
	}
	if c.Kind() != server.CLIENT {
		return false
	}
	token := c.GetOpts().Token
	if token == "" {
		return false
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(a.admin)) == 1 {
		c.RegisterUser(&server.User{Username: "admin"})
		return true
	}
	a.mu.Lock()
	ac := a.byToken[token]
	if ac != nil {
		ac.cids[c.GetID()] = struct{}{}
	}
	a.mu.Unlock()
	if ac == nil {
		return false
	}
	c.RegisterUser(&server.User{Username: "agent." + ac.ws + "." + ac.name, Permissions: AgentPermissions(ac.ws, ac.name)})
	return true
}

// ErrBadRequest is returned for a credential request without a valid
// workspace and agent name.
var ErrBadRequest = errors.New("bad credential request")

// Issue returns a new credential for agent name of workspace ws,
// revoking the one it had (a wrapper that joins again, or took over the
// name of one that crashed).
func (h *Hub) Issue(ws, name string) (Credential, error) {
	if !validToken(ws) || !validToken(name) {
		return Credential{}, fmt.Errorf("%w: workspace %q, agent %q", ErrBadRequest, ws, name)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return Credential{}, fmt.Errorf("issue credential: %w", err)
	}
	ac := &agentCred{ws: ws, name: name, token: "agent-" + hex.EncodeToString(raw), cids: map[uint64]struct{}{}}
	a := h.auth
	a.mu.Lock()
	old := a.byAgent[ws+"."+name] // replaced in the same step: never two for one name
	if old != nil {
		delete(a.byToken, old.token)
	}
	a.byToken[ac.token] = ac
	a.byAgent[ws+"."+name] = ac
	err := a.save()
	a.mu.Unlock()
	if old != nil {
		h.disconnect(old)
	}
	if err != nil {
		return Credential{}, fmt.Errorf("issue credential: %w", err)
	}
	return Credential{Token: ac.token, InboxPrefix: AgentInboxPrefix(ws, name)}, nil
}

// Revoke makes agent name's credential stop working and closes the
// connections made with it. It reports whether there was one.
func (h *Hub) Revoke(ws, name string) bool {
	a := h.auth
	a.mu.Lock()
	ac := a.byAgent[ws+"."+name]
	if ac != nil {
		delete(a.byAgent, ws+"."+name)
		delete(a.byToken, ac.token)
		_ = a.save() // a credential kept by mistake dies with the next issue for the name
	}
	a.mu.Unlock()
	if ac == nil {
		return false
	}
	h.disconnect(ac)
	return true
}

// disconnect closes the connections made with a credential that no longer
// exists.
func (h *Hub) disconnect(ac *agentCred) {
	h.auth.mu.Lock()
	cids := make([]uint64, 0, len(ac.cids))
	for cid := range ac.cids {
		cids = append(cids, cid)
	}
	h.auth.mu.Unlock()
	for _, cid := range cids {
		_ = h.srv.DisconnectClientByID(cid) // gone already: nothing to do
	}
}

// validToken is true for a name that is one NATS subject token of letters,
// digits, '_' and '-' (as bus.ValidName, which hub cannot import).
func validToken(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || (i > 0 && (c == '_' || c == '-'))) {
			return false
		}
	}
	return true
}

// serveCredentials answers IssueSubject and RevokeSubject on an in-process
// connection with the administrator's token.
func (h *Hub) serveCredentials() (*nats.Conn, error) {
	nc, err := nats.Connect("", nats.InProcessServer(h.srv), nats.Token(h.token), nats.Name("relay-hub-credentials"))
	if err != nil {
		return nil, fmt.Errorf("credential service: %w", err)
	}
	answer := func(m *nats.Msg, c Credential, err error) {
		if err != nil {
			c = Credential{Error: err.Error()}
		}
		b, _ := json.Marshal(c)
		_ = m.Respond(b)
	}
	if _, err := nc.Subscribe(IssueSubject, func(m *nats.Msg) {
		var r CredentialRequest
		if err := json.Unmarshal(m.Data, &r); err != nil {
			answer(m, Credential{}, fmt.Errorf("%w: %v", ErrBadRequest, err))
			return
		}
		c, err := h.Issue(r.Workspace, r.Name)
		answer(m, c, err)
	}); err != nil {
		nc.Close()
		return nil, fmt.Errorf("credential service: %w", err)
	}
	if _, err := nc.Subscribe(RevokeSubject, func(m *nats.Msg) {
		var r CredentialRequest
		if err := json.Unmarshal(m.Data, &r); err != nil {
			answer(m, Credential{}, fmt.Errorf("%w: %v", ErrBadRequest, err))
			return
		}
		h.Revoke(r.Workspace, r.Name)
		answer(m, Credential{}, nil)
	}); err != nil {
		nc.Close()
		return nil, fmt.Errorf("credential service: %w", err)
	}
	if err := nc.Flush(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("credential service: %w", err)
	}
	return nc, nil
}
