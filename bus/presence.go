package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// State is what an agent is doing, as its wrapper sees it.
type State string

// Agent states.
const (
	StateStarting State = "starting" // launched, not yet ready for input
	StateIdle     State = "idle"     // waiting for input: messages can be typed in
	StateBusy     State = "busy"     // working on something
	StateBlocked  State = "blocked"  // a dialog or question waits for its human (Presence.Ask)
	StateOffline  State = "offline"  // gone (closed, or its heartbeats stopped)
	// StateStuck is shown (never set) for a live agent whose oldest
	// incoming message waited longer than its stuck_after (SetStuck).
	StateStuck State = "stuck"
)

// ErrNameTaken is returned by Register when a live agent of the workspace
// holds the name.
var ErrNameTaken = errors.New("agent name taken")

// ErrNotRegistered is returned by calls that need Register first.
var ErrNotRegistered = errors.New("agent not registered")

// missedBeats is how many heartbeats may be missed before a claim expires.
const missedBeats = 3

// OfflineAfter is how long after its last heartbeat an agent whose
// heartbeats come every heartbeat reads offline and its claim expires
// (docs/protocol.md, Presence).
func OfflineAfter(heartbeat time.Duration) time.Duration { return missedBeats * heartbeat }

// Presence is one agent of a workspace as `relay agents` shows it.
type Presence struct {
	Name      string    `json:"name"`
	Workspace string    `json:"workspace"`
	State     State     `json:"state"`
	Since     time.Time `json:"since"`   // when State began
	Seen      time.Time `json:"seen"`    // last heartbeat, by the hub's clock
	Pending   uint64    `json:"pending"` // messages in its inbox not yet acknowledged
	Host      string    `json:"host,omitempty"`
	PID       int       `json:"pid,omitempty"`
	// CLI is the agent program as its wrapper knows it ("Claude Code",
	// "Codex", "Gemini CLI", "shell"); empty when not told (SetCLI).
	CLI string `json:"cli,omitempty"`
	// Skipped counts the bytes of output the wrapper's scanner skipped
	// (SetSkipped): commands in them were not seen.
	Skipped int64 `json:"skipped,omitempty"`
	// WaitingSince is when the oldest message still waiting to be typed
	// into a stuck agent arrived (the State is then StateStuck), by the
	// wrapper's clock; OldestWait is its age when listed, StuckReason why
	// it waits.
	WaitingSince time.Time     `json:"waiting_since,omitzero"`
	OldestWait   time.Duration `json:"oldest_wait_ns,omitempty"`
	StuckReason  string        `json:"stuck_reason,omitempty"`
	// Ask is the prompt a blocked agent waits on, when its wrapper knows
	// it (SetAsk).
	Ask *Ask `json:"ask,omitempty"`
	// Revoked is when the administrator revoked the agent's credentials
	// (MarkRevoked); its State is then offline.
	Revoked time.Time `json:"revoked,omitzero"`
}

// record is the JSON value under the agent's key in the presence bucket.
type record struct {
	State     State     `json:"state"`
	Since     time.Time `json:"since"`
	Session   string    `json:"session"`
	Heartbeat int64     `json:"heartbeat_ms"`
	Host      string    `json:"host,omitempty"`
	PID       int       `json:"pid,omitempty"`
	CLI       string    `json:"cli,omitempty"`
	Skipped   int64     `json:"skipped,omitempty"`
	Stuck     *stuck    `json:"stuck,omitempty"`
	Ask       *Ask      `json:"ask,omitempty"`
	// Revoked: MarkRevoked wrote this record (State offline).
	Revoked time.Time `json:"revoked,omitzero"`
	// PIDNS is the wrapper's pid namespace (Linux: /proc/self/ns/pid), so
	// that its pid is checked only where it means that process.
	PIDNS string `json:"pidns,omitempty"`
}

// stale reports whether a record written at created is an abandoned claim.
func (r record) stale(created, now time.Time) bool {
	if r.State == StateOffline {
		return true
	}
	hb := time.Duration(r.Heartbeat) * time.Millisecond
	if hb <= 0 {
		hb = 2 * time.Second
	}
	return now.Sub(created) > OfflineAfter(hb)
}

// claim is this client's hold on its name.
type claim struct {
	mu      sync.Mutex
	session string
	rev     uint64
	state   State
	since   time.Time
	lost    error
	cancel  context.CancelFunc
	done    chan struct{}
	answer  *nats.Subscription // answers on ClaimSubject while the claim holds
}

func (cl *claim) stop() {
	cl.cancel()
	<-cl.done
	if cl.answer != nil {
		_ = cl.answer.Unsubscribe()
	}
}

// Register claims the client's name in its workspace with state starting
// and keeps it alive with heartbeats until Close. A name held by a live
// agent (one that answers on ClaimSubject, or whose key is fresh) is
// refused with ErrNameTaken; the claim of a crashed agent (no heartbeat for
// three periods, or its process gone on this machine) or of one that went
// offline is taken over.
func (c *Client) Register(ctx context.Context) error {
	if c.opts.Name == "" {
		return fmt.Errorf("register: %w: no agent name", ErrNotRegistered)
	}
	host := c.ident.host
	cl := &claim{session: NewID(), state: StateStarting, since: time.Now().UTC(), done: make(chan struct{})}
	val := c.encode(cl, host)
	rev, err := c.claimKey(ctx, val, host)
	if err == nil {
		err = c.answerClaims(cl, host)
	}
	if err != nil {
		if cl.answer != nil {
			_ = cl.answer.Unsubscribe()
		}
		return fmt.Errorf("register %q in workspace %q: %w", c.opts.Name, c.opts.Workspace, err)
	}
	cl.rev = rev
	hctx, cancel := context.WithCancel(context.Background())
	cl.cancel = cancel
	c.mu.Lock()
	old := c.claim
	c.claim = cl
	c.mu.Unlock()
	if old != nil {
		old.stop()
	}
	go c.heartbeat(hctx, cl)
	return nil
}

// claimKey writes the claim's key, val, unless a live agent holds the
// name: it asks the live holder and reads the key together (two requests in
// flight, one round trip), then creates the key or takes a stale claim
// over with a compare-and-set. A name that was used before (the usual
// case) costs two round trips, not five (issue 34).
func (c *Client) claimKey(ctx context.Context, val []byte, host string) (uint64, error) {
	held := make(chan error, 1)
	go func() { held <- c.askHolder(ctx) }()
	e, err := c.kv.Get(ctx, c.opts.Name)
	if herr := <-held; herr != nil {
		return 0, herr
	}
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		rev, err := c.kv.Create(ctx, c.opts.Name, val)
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return rev, err
		}
		// Written since it was read: read it again.
		return c.takeOver(ctx, val, host)
	}
	if err != nil {
		return 0, err
	}
	return c.takeOverEntry(ctx, e, val, host)
}

func (c *Client) takeOver(ctx context.Context, val []byte, host string) (uint64, error) {
	e, err := c.kv.Get(ctx, c.opts.Name)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return c.kv.Create(ctx, c.opts.Name, val)
	}
	if err != nil {
		return 0, err
	}
	return c.takeOverEntry(ctx, e, val, host)
}

// takeOverEntry claims the name whose current entry is e when e is a stale
// or provably dead agent's claim: a compare-and-set on e's revision.
func (c *Client) takeOverEntry(ctx context.Context, e jetstream.KeyValueEntry, val []byte, host string) (uint64, error) {
	var r record
	_ = json.Unmarshal(e.Value(), &r)
	if !r.stale(e.Created(), time.Now()) && !r.provablyDead(host) {
		return 0, fmt.Errorf("%w: a live agent holds it (%s, pid %d on %s, last seen %s ago); choose another name",
			ErrNameTaken, r.State, r.PID, r.Host, time.Since(e.Created()).Round(time.Millisecond))
	}
	rev, err := c.kv.Update(ctx, c.opts.Name, val, e.Revision())
	if errors.Is(err, jetstream.ErrKeyExists) {
		return 0, fmt.Errorf("%w: another agent claimed it at the same moment", ErrNameTaken)
	}
	return rev, err
}

func (c *Client) encode(cl *claim, host string) []byte {
	return c.enc.encode(record{
		State: cl.state, Since: cl.since, Session: cl.session,
		Heartbeat: c.opts.Heartbeat.Milliseconds(), Host: host, PID: os.Getpid(),
		CLI: c.cli.Load().(string), Skipped: c.skipped.Load(), Stuck: c.stuck.Load(), Ask: c.askFor(cl.state),
		PIDNS: c.ident.pidns,
	})
}

// encodedRecord keeps the last presence record and its JSON: an idle
// agent's heartbeats write the same record every period (issue 34: the
// encoding was a tenth of an idle wrapper's CPU).
type encodedRecord struct {
	mu  sync.Mutex
	rec record
	b   []byte
}

func (e *encodedRecord) encode(r record) []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.b != nil && r == e.rec {
		return e.b
	}
	b, _ := json.Marshal(r)
	e.rec, e.b = r, b
	return b
}

// identity is what a presence record says of this process's place, read
// at Connect: not again at every heartbeat.
type identity struct{ host, pidns string }

func readIdentity() identity {
	host, _ := os.Hostname()
	return identity{host: host, pidns: pidNamespace()}
}

func (c *Client) heartbeat(ctx context.Context, cl *claim) {
	defer close(cl.done)
	t := time.NewTicker(c.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cl.mu.Lock()
		st := cl.state
		cl.mu.Unlock()
		pctx, cancel := context.WithTimeout(ctx, c.opts.Heartbeat)
		err := c.putPresence(pctx, cl, st)
		cancel()
		if errors.Is(err, ErrNameTaken) {
			c.log.Error("lost the agent name to another agent; stopped heartbeats", "err", err)
			if cl.answer != nil {
				_ = cl.answer.Unsubscribe()
			}
			return
		}
		if err != nil && ctx.Err() == nil {
			c.log.Warn("heartbeat failed", "err", err)
		}
	}
}

// putPresence writes the claim with state, if the claim is still ours.
func (c *Client) putPresence(ctx context.Context, cl *claim, st State) error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.lost != nil {
		return cl.lost
	}
	if st != cl.state {
		cl.state, cl.since = st, time.Now().UTC()
	}
	host := c.ident.host
	rev, err := c.kv.Update(ctx, c.opts.Name, c.encode(cl, host), cl.rev)
	if err == nil {
		cl.rev = rev
		return nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("update presence of %q: %w", c.opts.Name, err)
	}
	// The revision moved: either our own write's answer was lost, someone
	// took the name over while our heartbeats did not reach the hub, or the
	// key is gone (deleted, purged, the hub's storage lost): then it is
	// written again, never left missing.
	e, gerr := c.kv.Get(ctx, c.opts.Name)
	if errors.Is(gerr, jetstream.ErrKeyNotFound) {
		return c.recreate(ctx, cl, c.encode(cl, host))
	}
	if gerr != nil {
		return fmt.Errorf("update presence of %q: %w", c.opts.Name, gerr)
	}
	return c.adopt(cl, e)
}

// publishOffline writes the claim offline without waiting for the hub's
// answer (Close flushes it): a KV update published on the claim's subject
// with the claim's revision expected, which the hub stores or, when the
// key moved on (another agent took the name over), refuses unanswered.
func (c *Client) publishOffline(cl *claim) error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.lost != nil {
		return nil // the name is another agent's now
	}
	if cl.state != StateOffline {
		cl.state, cl.since = StateOffline, time.Now().UTC()
	}
	m := nats.NewMsg(presenceSubject(c.opts.Workspace, c.opts.Name))
	m.Data = c.encode(cl, c.ident.host)
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(cl.rev, 10))
	if err := c.nc.PublishMsg(m); err != nil {
		return fmt.Errorf("mark %q offline: %w", c.opts.Name, err)
	}
	return nil
}

// presenceSubject is the subject of agent's key in the presence bucket.
func presenceSubject(workspace, agent string) string {
	return "$KV." + PresenceBucket(workspace) + "." + agent
}

// SetState records what the agent is doing. It needs Register.
func (c *Client) SetState(ctx context.Context, st State) error {
	c.mu.Lock()
	cl := c.claim
	c.mu.Unlock()
	if cl == nil {
		return fmt.Errorf("set state: %w", ErrNotRegistered)
	}
	return c.putPresence(ctx, cl, st)
}

// Agents lists every agent ever registered in the workspace, by name, with
// its state (offline when its heartbeats stopped, or its process on this
// machine is gone) and pending count.
func (c *Client) Agents(ctx context.Context) ([]Presence, error) {
	lister, err := c.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	var names []string
	for k := range lister.Keys() {
		names = append(names, k)
	}
	sort.Strings(names)
	now := time.Now()
	out := make([]Presence, 0, len(names))
	for _, n := range names {
		e, err := c.kv.Get(ctx, n)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list agents: %s: %w", n, err)
		}
		var r record
		_ = json.Unmarshal(e.Value(), &r)
		p := Presence{Name: n, Workspace: c.opts.Workspace, State: r.State, Since: r.Since, Seen: e.Created(), Host: r.Host, PID: r.PID,
			CLI: r.CLI, Skipped: r.Skipped, Revoked: r.Revoked}
		// Offline once its heartbeats stopped, or at once when its wrapper
		// ran on this machine and its process is gone (a crash, a kill):
		// what the claim takes over (Register) is listed so too.
		if (r.stale(e.Created(), now) || r.provablyDead(c.ident.host)) && p.State != StateOffline {
			p.State, p.Since = StateOffline, e.Created()
		}
		if r.State == StateBlocked && p.State != StateOffline {
			p.Ask = r.Ask
		}
		if r.Stuck != nil && p.State != StateOffline && p.State != StateBlocked {
			p.State, p.WaitingSince, p.StuckReason = StateStuck, r.Stuck.Since, r.Stuck.Reason
			p.OldestWait = max(now.Sub(r.Stuck.Since), 0)
		}
		if p.Pending, err = c.pending(ctx, n); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// pending counts the messages in agent's inbox not yet acknowledged.
func (c *Client) pending(ctx context.Context, agent string) (uint64, error) {
	cons, err := c.js.Consumer(ctx, StreamName(c.opts.Workspace), agent)
	if err == nil {
		info, err := cons.Info(ctx)
		if err != nil {
			return 0, fmt.Errorf("pending for %s: %w", agent, err)
		}
		return info.NumPending + uint64(info.NumAckPending), nil
	}
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return 0, fmt.Errorf("pending for %s: %w", agent, err)
	}
	st, err := c.workspaceStream(ctx)
	if err != nil {
		return 0, fmt.Errorf("pending for %s: %w", agent, err)
	}
	var n uint64
	for _, filter := range []string{InboxSubject(c.opts.Workspace, agent), SenderInboxSubject(c.opts.Workspace, agent, "*")} {
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
		if err != nil {
			return 0, fmt.Errorf("pending for %s: %w", agent, err)
		}
		for _, k := range info.State.Subjects {
			n += k
		}
	}
	return n, nil
}

// names is what a client knows of its workspace's agent names: every name
// it has seen registered (agents are never removed from the bucket), from
// its own listings and key reads, so that Send knows a recipient without
// a round trip the second time. A watch of the bucket would deliver every
// agent's heartbeat to every client: for N wrappers N² messages, and in
// each idle wrapper a wake-up every heartbeat of every peer (issue 34).
type names struct {
	mu sync.Mutex
	m  map[string]bool
}

func (n *names) add(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[string]bool{}
	}
	n.m[name] = true
}

// has reports whether name was seen registered.
func (n *names) has(name string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.m[name]
}

// others lists the names seen except self, sorted.
func (n *names) others(self string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.m))
	for k := range n.m {
		if k != self {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
