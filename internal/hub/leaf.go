//go:build !lean

package hub

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/relayhq/relay/internal/statedir"
)

// Leaf machines. The team's hub opens a NATS leafnode listener; another
// machine's hub joins it as a leaf node with a ticket (Invite) that holds the
// listener's address, its TLS pin and a credential for that machine alone.
// The hub's authenticator checks a leaf's credential at its CONNECT, gives
// the link only the subjects in LeafPermissions, and refuses a revoked or
// expired one; revoking closes the link at once.
//
// Each hub keeps its own JetStream (its own domain: DomainTeam on the team's
// hub, LeafDomain(machine) on a leaf), so agents on one side keep talking
// when the link is down. The streams are copied across the link by the
// bridge (bridge.go).

// DomainTeam is the JetStream domain of a team's hub.
const DomainTeam = "relay"

// LeafDomain is the JetStream domain of machine's leaf hub: relay-<machine>.
func LeafDomain(machine string) string { return "relay-" + machine }

// Subjects of the leaf service, asked with the administrator's token (relay
// invite); neither agents' credentials nor leaf links may use them.
const (
	InviteSubject      = "relay._leaf.invite"
	ListLeavesSubject  = "relay._leaf.list"
	RevokeLeafSubject  = "relay._leaf.revoke"
	leafUserPrefix     = "leaf-"
	ticketPrefix       = "relay-ticket1:"
	defaultInviteValid = 24 * time.Hour
)

// ErrBadTicket is returned by ParseTicket for text that is not a ticket.
var ErrBadTicket = errors.New("not a relay ticket")

// ErrNoLeafListener is returned by Invite on a hub without a leafnode
// listener (a hub that is itself a leaf).
var ErrNoLeafListener = errors.New("this hub takes no leaf machines")

// Ticket is what a machine needs to join a team's hub as a leaf: printed by
// relay invite as one line (String), read by relay up --join (ParseTicket).
type Ticket struct {
	URL     string    `json:"url"`           // the leafnode listener: nats-leaf://host:port or tls://host:port
	TLSPin  string    `json:"pin,omitempty"` // hex SHA-256 of the hub's certificate
	Machine string    `json:"machine"`
	Secret  string    `json:"secret"`
	Expires time.Time `json:"expires,omitzero"` // the ticket must be used before
}

// String is the ticket as one line of text.
func (t Ticket) String() string {
	b, _ := json.Marshal(t)
	return ticketPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// ParseTicket reads a ticket printed by relay invite.
func ParseTicket(s string) (Ticket, error) {
	var t Ticket
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), ticketPrefix)
	if !ok {
		return t, fmt.Errorf("%w: it starts with %q", ErrBadTicket, ticketPrefix)
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return t, fmt.Errorf("%w: %w", ErrBadTicket, err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("%w: %w", ErrBadTicket, err)
	}
	if t.URL == "" || t.Secret == "" || !validToken(t.Machine) {
		return t, fmt.Errorf("%w: it lacks the hub's address, the machine or its secret", ErrBadTicket)
	}
	return t, nil
}

// Leaf is one invited machine, as relay invite --list shows it.
type Leaf struct {
	Machine   string    `json:"machine"`
	Secret    string    `json:"secret,omitempty"`
	Created   time.Time `json:"created"`
	Expires   time.Time `json:"expires,omitzero"` // of the ticket, until first joined
	Joined    time.Time `json:"joined,omitzero"`  // first link made with it
	Connected bool      `json:"connected"`        // a link is up now (not kept in the file)
}

// LeafPermissions is what a leaf machine's link may carry, from the leaf's
// side: publish is what it may send into the team's hub, subscribe what the
// hub sends it. The JetStream API of the other side's domain (the bridge
// copies streams through it), replies, name claims, control and screen
// subjects, the memory service; never inboxes, receipts or key-value
// subjects (each side stores its own and the bridge copies them, so a
// message is stored once a side), nor the hub's credential and leaf
// services.
func LeafPermissions(machine string) *server.Permissions {
	common := []string{"_INBOX.>", "_RELAY_INBOX.>", "relay.*.claim.>", "relay.*.control.>", "relay.*.screen.>"}
	return &server.Permissions{
		Publish: &server.SubjectPermission{
			Allow: append([]string{"$JS." + DomainTeam + ".API.>", "relay._memory.>"}, common...),
			Deny:  []string{"relay._creds.>", "relay._leaf.>"},
		},
		Subscribe: &server.SubjectPermission{
			Allow: append([]string{"$JS." + LeafDomain(machine) + ".API.>"}, common...),
			Deny:  []string{"relay._creds.>", "relay._leaf.>"},
		},
	}
}

// leafCred is one invited machine's credential.
type leafCred struct {
	Leaf
	cids map[uint64]struct{}
}

// leaves is the registry of invited machines, kept in leaves.json.
type leaves struct {
	path string
	by   map[string]*leafCred // machine
}

func loadLeaves(path string) (*leaves, error) {
	l := &leaves{path: path, by: map[string]*leafCred{}}
	b, err := statedir.ReadSecret(path)
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read leaf machines: %w", err)
	}
	var saved []Leaf
	if err := json.Unmarshal(b, &saved); err != nil {
		return nil, fmt.Errorf("read leaf machines %s: %w", path, err)
	}
	for _, s := range saved {
		l.by[s.Machine] = &leafCred{Leaf: s, cids: map[uint64]struct{}{}}
	}
	return l, nil
}

// save writes the registry; auth.mu is held.
func (l *leaves) save() error {
	saved := make([]Leaf, 0, len(l.by))
	for _, c := range l.by {
		s := c.Leaf
		s.Connected = false
		saved = append(saved, s)
	}
	b, _ := json.Marshal(saved)
	return writeFileAtomic(l.path, b)
}

// checkLeaf authenticates a leaf link: user leaf-<machine>, the machine's
// secret as password, before its ticket expired unless it joined already.
func (a *auth) checkLeaf(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	machine, ok := strings.CutPrefix(o.Username, leafUserPrefix)
	if !ok || a.leaves == nil {
		return false
	}
	a.mu.Lock()
	lc := a.leaves.by[machine]
	if lc == nil || subtle.ConstantTimeCompare([]byte(lc.Secret), []byte(o.Password)) != 1 ||
		(lc.Joined.IsZero() && !lc.Expires.IsZero() && time.Now().After(lc.Expires)) {
		a.mu.Unlock()
		return false
	}
	if lc.Joined.IsZero() {
		lc.Joined = time.Now().UTC()
		_ = a.leaves.save() // not saved: the next link saves it
	}
	lc.cids[c.GetID()] = struct{}{}
	a.mu.Unlock()
	c.RegisterUser(&server.User{Username: o.Username, Permissions: LeafPermissions(machine)})
	return true
}

// Invite makes (or makes anew, revoking the old) machine's leaf credential
// and returns its ticket, valid for its first link until now+valid (zero
// means 24 h, negative never expires).
func (h *Hub) Invite(machine string, valid time.Duration) (Ticket, error) {
	if h.leafURL == "" {
		return Ticket{}, ErrNoLeafListener
	}
	if !validToken(machine) {
		return Ticket{}, fmt.Errorf("%w: machine name %q: use letters, digits, '_' and '-'", ErrBadRequest, machine)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return Ticket{}, fmt.Errorf("invite %s: %w", machine, err)
	}
	if valid == 0 {
		valid = defaultInviteValid
	}
	now := time.Now().UTC()
	lc := &leafCred{Leaf: Leaf{Machine: machine, Secret: hex.EncodeToString(raw), Created: now}, cids: map[uint64]struct{}{}}
	if valid > 0 {
		lc.Expires = now.Add(valid)
	}
	a := h.auth
	a.mu.Lock()
	old := a.leaves.by[machine]
	a.leaves.by[machine] = lc
	err := a.leaves.save()
	a.mu.Unlock()
	if old != nil {
		h.disconnectLeaf(old)
	}
	if err != nil {
		return Ticket{}, fmt.Errorf("invite %s: %w", machine, err)
	}
	h.bridges.add(LeafDomain(machine))
	return Ticket{URL: h.leafURL, TLSPin: h.pin, Machine: machine, Secret: lc.Secret, Expires: lc.Expires}, nil
}

// Leaves lists the invited machines, without their secrets.
func (h *Hub) Leaves() []Leaf {
	a := h.auth
	var out []Leaf
	a.mu.Lock()
	for _, lc := range a.leaves.by {
		l := lc.Leaf
		l.Secret = ""
		for cid := range lc.cids {
			if c := h.srv.GetLeafNode(cid); c != nil {
				l.Connected = true
			}
		}
		out = append(out, l)
	}
	a.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Machine < out[j].Machine })
	return out
}

// RevokeLeaf removes machine's credential and cuts its link at once; it
// reports whether there was one. The machine's hub keeps running on its
// own: its agents keep talking to each other.
func (h *Hub) RevokeLeaf(machine string) bool {
	a := h.auth
	a.mu.Lock()
	lc := a.leaves.by[machine]
	if lc != nil {
		delete(a.leaves.by, machine)
		_ = a.leaves.save()
	}
	a.mu.Unlock()
	if lc == nil {
		return false
	}
	h.bridges.remove(LeafDomain(machine))
	h.disconnectLeaf(lc)
	return true
}

func (h *Hub) disconnectLeaf(lc *leafCred) {
	h.auth.mu.Lock()
	cids := make([]uint64, 0, len(lc.cids))
	for cid := range lc.cids {
		cids = append(cids, cid)
	}
	h.auth.mu.Unlock()
	for _, cid := range cids {
		if c := h.srv.GetLeafNode(cid); c != nil {
			_ = h.srv.DisconnectClientByID(cid)
		}
	}
}

// InviteRequest asks the team's hub for a ticket (InviteSubject), or to
// revoke a machine (RevokeLeafSubject: Machine only).
type InviteRequest struct {
	Machine string        `json:"machine"`
	Valid   time.Duration `json:"valid,omitempty"` // zero: 24 h; negative: no expiry
	// Address replaces the host:port in the ticket: how the other machine
	// reaches the leafnode listener (a public name, a tunnel).
	Address string `json:"address,omitempty"`
}

// InviteReply is the answer on InviteSubject, ListLeavesSubject and
// RevokeLeafSubject.
type InviteReply struct {
	Ticket  string `json:"ticket,omitempty"`
	Leaves  []Leaf `json:"leaves,omitempty"`
	Revoked bool   `json:"revoked,omitempty"`
	Error   string `json:"error,omitempty"`
}

// serveLeaves answers the leaf service's subjects on nc (the hub's own
// connection, with the administrator's token).
func (h *Hub) serveLeaves(nc *nats.Conn) error {
	answer := func(m *nats.Msg, r InviteReply, err error) {
		if err != nil {
			r = InviteReply{Error: err.Error()}
		}
		b, _ := json.Marshal(r)
		_ = m.Respond(b)
	}
	handle := func(subj string, f func(InviteRequest) (InviteReply, error)) error {
		_, err := nc.Subscribe(subj, func(m *nats.Msg) {
			var r InviteRequest
			if len(m.Data) > 0 {
				if err := json.Unmarshal(m.Data, &r); err != nil {
					answer(m, InviteReply{}, fmt.Errorf("%w: %v", ErrBadRequest, err))
					return
				}
			}
			rep, err := f(r)
			answer(m, rep, err)
		})
		return err
	}
	err := errors.Join(
		handle(InviteSubject, func(r InviteRequest) (InviteReply, error) {
			t, err := h.Invite(r.Machine, r.Valid)
			if err != nil {
				return InviteReply{}, err
			}
			if r.Address != "" {
				u, err := url.Parse(t.URL)
				if err != nil {
					return InviteReply{}, fmt.Errorf("invite: %w", err)
				}
				u.Host = r.Address
				t.URL = u.String()
			}
			return InviteReply{Ticket: t.String()}, nil
		}),
		handle(ListLeavesSubject, func(InviteRequest) (InviteReply, error) {
			return InviteReply{Leaves: h.Leaves()}, nil
		}),
		handle(RevokeLeafSubject, func(r InviteRequest) (InviteReply, error) {
			return InviteReply{Revoked: h.RevokeLeaf(r.Machine)}, nil
		}),
	)
	if err != nil {
		return fmt.Errorf("leaf service: %w", err)
	}
	return nil
}
