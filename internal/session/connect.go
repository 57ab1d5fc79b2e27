package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hubdial"
	"github.com/relayhq/relay/internal/memory"
	"github.com/relayhq/relay/internal/natscreds"
	"github.com/relayhq/relay/internal/statedir"
	"github.com/relayhq/relay/internal/termsafe"
)

// Timings of joining the team.
const (
	// connectWait bounds how long a session waits for the hub before it
	// starts the agent anyway (and keeps trying in the background).
	connectWait = 5 * time.Second
	// maxOutbox bounds the messages kept while the hub is unreachable.
	maxOutbox = 1000
	// presenceEvery is how often a wrapper refreshes its agent's presence
	// (bus.Options.Heartbeat, 2 s for other clients): each refresh wakes
	// the wrapper and the runtime's monitor thread, and at 5 s they were
	// a third of an idle wrapper's CPU and 0.04 s a minute of one under
	// a spinner (issue 34). A state change is written at once all the
	// same; a wrapper that died without a word reads offline after three
	// periods, 30 s, from another machine; on its own machine at once
	// (relay agents and the claim see its process gone).
	presenceEvery = 10 * time.Second
)

// hubLink is everything of the session that talks to the hub. Its fields
// are made before the stages start; each is guarded on its own:
//   - client is stored by connect (at start, or by the inbox stage's
//     retries) and read by any goroutine; nil until the hub was reached;
//   - local (hubstart.go), ident (agentfile.go) and out have locks of
//     their own; cut is an atomic (refused.go);
//   - presence is the presence stage (state.go): the owner sets it, its
//     own goroutine (presenceStage.run) sends it;
//   - screen is the screen publisher (screen.go), its own goroutine.
type hubLink struct {
	client   atomic.Pointer[bus.Client]
	local    localHub    // a hub run inside this process, if any
	ident    agentFile   // the child's identity file and socket
	cut      atomic.Bool // the hub refused the agent's credentials
	out      outgoing
	presence *presenceStage
	screen   screenPub
	// claim is the first name claim's answer (overlap.go): settled before
	// the child starts, or beside it in an overlapped start.
	claim *claim
}

func newHubLink() hubLink {
	return hubLink{presence: newPresenceStage(), screen: newScreenPub(), claim: settledClaim()}
}

func (s *Session) alone() bool { return s.cfg.Hub == NoHub }

// connect reaches the hub and claims the name; with AutoName, a taken name
// is made unique with a number (claude-2, claude-3, ...).
func (s *Session) connect(ctx context.Context) error {
	o, c, err := s.reach(ctx, s.cfg.Name)
	if err != nil {
		return err
	}
	return s.claimName(ctx, o, c)
}

// reach finds the hub (starting the local one if need be) and connects to
// it as agent name: the options it connected with and the client, whose
// name is not claimed yet. A local hub is found from its record alone, and
// this connection is what asks it; one that does not answer is looked for
// again as the start always did (asked, and a new one started when none
// answers), and dialled once more.
func (s *Session) reach(ctx context.Context, name string) (bus.Options, *bus.Client, error) {
	o, found, err := s.hubOptions(ctx, false)
	if err != nil {
		return o, nil, err
	}
	c, err := s.dial(ctx, o, name)
	if err == nil || !found || !bus.Unanswered(err) {
		return o, c, err
	}
	s.log.Info("the hub in the record does not answer; looking again", "url", o.URL, "err", err)
	if o, _, err = s.hubOptions(ctx, true); err != nil {
		return o, nil, err
	}
	c, err = s.dial(ctx, o, name)
	return o, c, err
}

// hubOptions finds the hub (starting the local one if need be, see
// ensureHub for ask and found) and returns how to reach it.
func (s *Session) hubOptions(ctx context.Context, ask bool) (o bus.Options, found bool, err error) {
	o = bus.Options{URL: s.cfg.Hub, Token: s.cfg.Token}
	if o.URL == "" {
		var ep hub.Endpoint
		ep, found, err = s.ensureHub(ctx, ask)
		if err != nil {
			return o, false, err
		}
		o = hubdial.Local(s.cfg.Home, ep)
	}
	o.Creds, o.TLSCA, o.Workspace = s.cfg.Creds, s.cfg.TLSCA, s.cfg.Workspace
	o.AckWait, o.Logger, o.Heartbeat = bus.DefaultAckWait, s.log, presenceEvery
	if o.Creds != "" { // an agent's own credentials read only its replies
		o.InboxPrefix = natscreds.InboxPrefix(o.Creds)
	}
	return o, found, nil
}

// claimName claims the agent's name with c, connected with o as that name:
// the client is stored, and the outbox opened, only once the hub granted
// it. A name taken (with AutoName) is tried again with a number, on a new
// connection.
func (s *Session) claimName(ctx context.Context, o bus.Options, c *bus.Client) error {
	base := s.cfg.Name
	for n := 1; ; n++ {
		name := base
		if n > 1 {
			name = fmt.Sprintf("%s-%d", base, n)
			var err error
			if c, err = s.dial(ctx, o, name); err != nil {
				return err
			}
		}
		err := s.register(ctx, c, o, name)
		if errors.Is(err, bus.ErrNameTaken) && s.cfg.AutoName && n < 50 {
			continue
		}
		return err
	}
}

// dial connects to the hub as agent name: the workspace's stream and
// presence bucket are there (a full hub or refused credentials say so
// here), the name is not claimed yet.
func (s *Session) dial(ctx context.Context, o bus.Options, name string) (*bus.Client, error) {
	o.Name = name
	o.OnRefused = func(err error) { s.hubRefused(name, err) }
	return bus.Connect(ctx, o)
}

// register claims name with c (closed when it fails) and, once the hub
// granted it, makes c the session's client: the agent's credential, its
// state, the outbox.
func (s *Session) register(ctx context.Context, c *bus.Client, o bus.Options, name string) error {
	if err := c.Register(ctx); err != nil {
		c.Close()
		return err
	}
	c.SetCLI(s.spec.prof.CLI)
	url := o.URL
	s.link.ident.hubAuth(url, o.TLSPin, hub.Credential{})
	if o.InboxPrefix == "" { // with its own credentials, the agent has them already
		s.issueAside(c, name, url)
	}
	s.link.ident.rewrite(s.log) // after a reconnection or an overlapped start; no file yet at the first
	s.do(func(st *state) {
		st.name, st.url = name, url
		// Tell the hub the agent's state now: it may have changed
		// while the hub was away (an agent joining late is not left
		// "starting").
		st.presenceSent = false
		if st.started {
			s.push(st)
		}
	})
	s.watchScreen(c)
	s.link.client.Store(c)
	s.link.presence.poke() // a state set before the client was stored
	// Open the outbox now, not when the inbox starts: what the agent
	// writes in its first moments goes out at once, and it is not told
	// that a hub it has just reached is unreachable.
	s.startOutbox(c)
	return nil
}

// peers lists the other agents online now, for the primer.
func (s *Session) peers(ctx context.Context, self string) []string {
	c := s.link.client.Load()
	if c == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	list, err := c.Agents(ctx)
	if err != nil {
		return nil
	}
	var names []string
	for _, p := range list {
		if p.Name != self && p.State != bus.StateOffline {
			names = append(names, p.Name)
		}
	}
	return names
}

// primer is what the agent learns at start: the protocol, its peers and,
// if asked, the memories most relevant to its project.
func (s *Session) primer(ctx context.Context, name string) string {
	p := agents.Primer(name, s.cfg.Workspace, s.peers(ctx, name))
	if s.mcpServer(name) != nil {
		p += agents.MCPPrimer
	}
	api, err := s.memory()
	if s.cfg.MemoryAtStart <= 0 || err != nil {
		return p
	}
	mctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ms, err := memory.Relevant(mctx, api, s.cfg.Workspace, s.dir(), s.cfg.MemoryAtStart)
	if err != nil {
		s.log.Warn("memories for the primer", "err", err)
		return p
	}
	if m := memory.FormatRelevant(ms, time.Now()); m != "" {
		p += "\n\n" + m
	}
	return p
}

// dir is the child's working folder.
func (s *Session) dir() string {
	if s.cfg.Dir != "" {
		return s.cfg.Dir
	}
	wd, _ := os.Getwd()
	return wd
}

// openJournal prepares what outlives a crash: the delivery journal.
func (s *Session) openJournal(name string) error {
	dir, err := statedir.EnsureSub(s.cfg.Home, "agents", s.cfg.Workspace, name)
	if err != nil {
		return fmt.Errorf("agent folder: %w", err)
	}
	j, err := delivery.OpenJournal(filepath.Join(dir, "delivered"))
	if err != nil {
		return err
	}
	s.inbox.journal = j
	return nil
}

// closeAll sends what waits in the outbox (exit.go: it waits for the hub a
// while, and tells the human what was not sent) and closes the hub
// connection and the journal.
func (s *Session) closeAll() {
	// A claim still under way (an overlapped start that ended early) is
	// given up: nothing may join the team after the session ended.
	s.link.claim.cancel()
	s.link.claim.wait(context.Background())
	s.flushOutbox()
	if c := s.link.client.Load(); c != nil {
		s.revokeCredential(c)
		c.Close()
	}
	if s.inbox.journal != nil {
		s.inbox.journal.Close()
	}
	s.link.ident.close()
	s.link.local.close()
}

// outgoing holds what the agent sends: the bus outbox once the hub was
// reached, the messages written before that until then.
type outgoing struct {
	mu    sync.Mutex
	ob    *bus.Outbox
	early []bus.Message
	ended bool // the session ended: the outbox was flushed
}

// send hands msg to the outbox, which sends it in the background, in
// order, and retries while the hub is away; before the first connection it
// waits in the session's own list. It returns a notice for the agent, if
// one is due now; the hub's verdict comes later through sent.
func (s *Session) send(msg bus.Message) string {
	if s.alone() {
		return "Not sent: this agent runs without a hub (--hub none)."
	}
	s.link.out.mu.Lock()
	defer s.link.out.mu.Unlock()
	if s.link.out.ended {
		s.log.Warn("not sent: the session has ended", "to", msg.To)
		return fmt.Sprintf("Not sent to %s: the session has ended.", msg.To)
	}
	if ob := s.link.out.ob; ob != nil {
		if _, err := ob.Post(msg); err != nil {
			return fmt.Sprintf("Not sent to %s: %v.", msg.To, err)
		}
		return ""
	}
	if len(s.link.out.early) >= maxOutbox {
		return fmt.Sprintf("Not sent to %s: the hub is unreachable and %d messages already wait.", msg.To, maxOutbox)
	}
	s.link.out.early = append(s.link.out.early, msg)
	if len(s.link.out.early) == 1 {
		return fmt.Sprintf("The hub is unreachable; your message to %s waits and goes out when it is back.", msg.To)
	}
	return ""
}

// startOutbox opens the bus outbox once connected and moves into it what
// waited for the hub, in order.
func (s *Session) startOutbox(c *bus.Client) {
	s.link.out.mu.Lock()
	if s.link.out.ended {
		// Reached as the session ends: what waited was told unsent.
		s.link.out.mu.Unlock()
		return
	}
	ob := c.NewOutbox(bus.OutboxOptions{Size: maxOutbox, OnSent: s.sent})
	early := s.link.out.early
	s.link.out.early = nil
	s.link.out.ob = ob
	s.link.out.mu.Unlock()
	for _, m := range early {
		if _, err := ob.Post(m); err != nil {
			s.notice(fmt.Sprintf("Not sent to %s: %v.", m.To, err))
		}
	}
}

// sent receives the hub's verdict on a message the agent sent.
func (s *Session) sent(env bus.Envelope, err error) {
	switch {
	case err == nil:
		s.answered(env) // receipts.go
		s.events.recent.addMessage(env)
		s.events.jobs.post(func(ctx context.Context) {
			s.fire(ctx, EventInfo{Event: MessageSent, ID: env.ID, From: env.From, To: env.To, Body: env.Body, Thread: env.Thread})
		})
	case errors.Is(err, bus.ErrUnknownAgent):
		s.answered(env) // stored all the same
		s.log.Info("sent to an unknown agent", "to", env.To, "id", env.ID)
		s.notice(unknownAgentNotice(env, s.cfg.Workspace, err))
	case errors.Is(err, bus.ErrNoRecipients):
		s.notice("Not sent: no other agent is in the workspace.")
	case errors.Is(err, bus.ErrBodyTooLarge):
		s.notice(fmt.Sprintf("Not sent: the message is larger than %d bytes.", bus.MaxBody))
	case s.link.cut.Load():
		s.notice(fmt.Sprintf("Not sent to %s: the hub refused this agent's credentials, so it is cut off from its team (its human was told).", env.To))
	default:
		s.notice(fmt.Sprintf("Not sent to %s: %v", env.To, err))
	}
}

// joinFailed decides what a failure to join the team at start means, and
// says it on the human's terminal before the agent starts (the log alone is
// not read, and on a full disk it cannot even be written). A refusal that
// trying again would not change (a token or credentials the hub refused, a
// hub that is not the one trusted, a state folder relay must not use) is
// returned: the agent does not start, cut off from its team without the
// human knowing. Anything else (a hub that is full or out of reach) lets the
// agent start alone while relay keeps trying: it joins once the hub has
// room or is back. It returns nil when err is nil.
func (s *Session) joinFailed(err error) error {
	if err == nil {
		return nil
	}
	name := s.name()
	if fatalJoin(err) {
		return fmt.Errorf("%s cannot join its team, so it was not started: %w", name, err)
	}
	s.log.Warn("hub not reachable; the agent starts alone and relay keeps trying", "err", err)
	why := fmt.Sprintf("%v; it starts alone and relay keeps trying to join", err)
	if errors.Is(err, bus.ErrHubFull) {
		why = "the hub's message store is full: free disk space where the hub keeps its store, or give it more with relay up --max-store; it starts alone and joins once there is room"
	}
	s.tell(fmt.Sprintf("relay: %s has not joined workspace %s: %s.", termsafe.Line(name), termsafe.Line(s.cfg.Workspace), termsafe.Line(why)))
	return nil
}

// fatalJoin says whether a failure to join the team at start refuses the
// session (joinFailed).
func fatalJoin(err error) bool {
	return errors.Is(err, bus.ErrUntrustedHub) || errors.Is(err, bus.ErrUnauthorized) || errors.Is(err, statedir.ErrUnsafe) || errors.Is(err, ErrNoHub)
}

// stderr is where the session speaks to the human before the agent starts.
func (s *Session) stderr() io.Writer {
	if s.cfg.Stderr != nil {
		return s.cfg.Stderr
	}
	return os.Stderr
}
