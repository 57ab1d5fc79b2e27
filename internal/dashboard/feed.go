package dashboard

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/mailbox"
)

// event is one replayable frame, encoded once.
type event struct {
	seq  uint64
	data []byte
}

// feed follows one workspace: its agents, its messages with their receipts,
// the memories that concern it, and its agents' screens. Every change is
// appended to a bounded ring of events numbered from 1; websocket clients
// read the ring from their last sequence and, when that fell out of it, get
// a snapshot of the state instead.
type feed struct {
	ws     string
	c      *bus.Client
	log    *slog.Logger
	ringN  int
	keepN  int // messages kept for snapshots
	poll   time.Duration
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu      sync.Mutex
	seq     uint64
	ring    []event // oldest first, at most ringN
	notify  chan struct{}
	agents  map[string]bus.Presence
	msgs    map[string]*bus.Entry
	order   []string // message ids, oldest first, at most keepN
	dropped uint64   // highest stream sequence of a message let go of
	mems    []Frame  // recent memory frames, oldest first
	screens map[string]bus.Screen
	scrNote chan struct{}
	sub     *nats.Subscription
	kick    mailbox.Signal // asks pollAgents for a listing now
}

const keepMemories = 50

func newFeed(c *bus.Client, o *Options) *feed {
	return &feed{
		ws: c.Workspace(), c: c, log: o.Logger.With("workspace", c.Workspace()),
		ringN: o.Ring, keepN: o.Keep, poll: o.Poll,
		notify: make(chan struct{}), agents: map[string]bus.Presence{}, msgs: map[string]*bus.Entry{},
		screens: map[string]bus.Screen{}, scrNote: make(chan struct{}), kick: mailbox.NewSignal(),
	}
}

// start follows the workspace until stop.
func (f *feed) start() error {
	sub, err := f.c.Conn().Subscribe(bus.ScreenSubject(f.ws, "*"), f.onScreen)
	if err != nil {
		return err
	}
	f.sub = sub
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.done.Add(3)
	go func() {
		defer f.done.Done()
		f.pollAgents(ctx)
	}()
	go func() {
		defer f.done.Done()
		f.watchPresence(ctx)
	}()
	go func() {
		defer f.done.Done()
		f.followLog(ctx)
	}()
	return nil
}

func (f *feed) stop() {
	if f.cancel != nil {
		f.cancel()
	}
	if f.sub != nil {
		_ = f.sub.Unsubscribe()
	}
	f.done.Wait()
	f.c.Close()
}

// appendLocked numbers fr, stores it in the ring and wakes the clients.
func (f *feed) appendLocked(fr Frame) {
	f.seq++
	fr.Seq = f.seq
	data, err := json.Marshal(fr)
	if err != nil {
		f.log.Error("encode dashboard frame", "type", fr.Type, "err", err)
		data = []byte(`{"type":"error","error":"frame could not be encoded"}`)
	}
	if len(f.ring) >= f.ringN {
		copy(f.ring, f.ring[1:])
		f.ring = f.ring[:len(f.ring)-1]
	}
	f.ring = append(f.ring, event{seq: f.seq, data: data})
	close(f.notify)
	f.notify = make(chan struct{})
}

// read returns what a client that saw everything up to since must get:
// the events after it, or (snapshot true) a snapshot when since is not in
// the ring. It also returns the channel closed at the next change.
func (f *feed) read(since uint64, force bool) (events [][]byte, snapshot []Frame, head uint64, wake <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	head, wake = f.seq, f.notify
	oldest := head + 1
	if len(f.ring) > 0 {
		oldest = f.ring[0].seq
	}
	if force || since > head || since+1 < oldest {
		snap := f.snapshotLocked()
		if snap == nil {
			snap = []Frame{}
		}
		return nil, snap, head, wake
	}
	for _, e := range f.ring {
		if e.seq > since {
			events = append(events, e.data)
		}
	}
	return events, nil, head, wake
}

// snapshotLocked is the state as frames without sequence numbers: agents,
// the last messages, the last memory changes.
func (f *feed) snapshotLocked() []Frame {
	out := make([]Frame, 0, len(f.agents)+len(f.order)+len(f.mems))
	names := make([]string, 0, len(f.agents))
	for n := range f.agents {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := f.agents[n]
		out = append(out, Frame{Type: TypeAgent, Agent: &p})
	}
	for _, id := range f.order {
		out = append(out, Frame{Type: TypeMessage, Message: toMessage(cloneEntry(f.msgs[id]), MaxFrameBody)})
	}
	for _, m := range f.mems {
		m.Seq = 0
		out = append(out, m)
	}
	return out
}

// minPoll spaces the agent listings that kicks ask for.
const minPoll = 50 * time.Millisecond

// pollAgents lists the agents every Options.Poll, and soon after a kick (a
// presence change, a message, a receipt: pending counts move with them),
// and appends a frame for each agent that changed.
func (f *feed) pollAgents(ctx context.Context) {
	t := time.NewTicker(f.poll)
	defer t.Stop()
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		agents, err := f.c.Agents(actx)
		cancel()
		if err != nil && ctx.Err() == nil {
			f.log.Debug("list agents", "err", err)
		}
		if err == nil {
			f.mu.Lock()
			for _, p := range agents {
				if old, ok := f.agents[p.Name]; ok && samePresence(old, p) {
					continue
				}
				f.agents[p.Name] = p
				f.appendLocked(Frame{Type: TypeAgent, Agent: &p})
			}
			f.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(minPoll):
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-f.kick:
		}
	}
}

// kickPoll asks for an agent listing soon.
func (f *feed) kickPoll() { f.kick.Notify() }

// watchPresence kicks a listing when an agent's presence record changes in
// what the dashboard shows; a heartbeat that only refreshes it does not.
// Without the watch (it failed) the periodic listing still runs.
func (f *feed) watchPresence(ctx context.Context) {
	js, err := jetstream.New(f.c.Conn())
	if err != nil {
		return
	}
	kv, err := js.KeyValue(ctx, bus.PresenceBucket(f.ws))
	if err != nil {
		f.log.Debug("watch presence", "err", err)
		return
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		f.log.Debug("watch presence", "err", err)
		return
	}
	defer w.Stop()
	type shown struct {
		State   string `json:"state"`
		Session string `json:"session"`
		CLI     string `json:"cli"`
		Skipped int64  `json:"skipped"`
		Stuck   struct {
			Since, Reason string
		} `json:"stuck"`
	}
	last := map[string]shown{}
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e == nil {
				continue
			}
			var r shown
			_ = json.Unmarshal(e.Value(), &r)
			if prev, seen := last[e.Key()]; seen && prev == r {
				continue
			}
			last[e.Key()] = r
			f.kickPoll()
		}
	}
}

// samePresence ignores Seen, which moves with every heartbeat, and
// OldestWait, which moves with every listing (the page counts from
// WaitingSince).
func samePresence(a, b bus.Presence) bool {
	a.Seen, b.Seen = time.Time{}, time.Time{}
	a.OldestWait, b.OldestWait = 0, 0
	return reflect.DeepEqual(a, b)
}

func (f *feed) followLog(ctx context.Context) {
	for ctx.Err() == nil {
		err := f.c.Log(ctx, bus.LogOptions{Follow: true, Last: f.keepN, Keep: f.keepN}, f.onEntry)
		if ctx.Err() != nil {
			return
		}
		f.log.Warn("follow the message log; retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// onEntry folds a message or a status change into the feed. After a restart
// of followLog the history comes again: known messages only emit receipts
// for what changed.
func (f *feed) onEntry(e bus.Entry) error {
	f.kickPoll() // pending counts follow messages and receipts
	f.mu.Lock()
	defer f.mu.Unlock()
	old, ok := f.msgs[e.ID]
	if !ok && e.Seq <= f.dropped { // an old message's receipt: pass it on
		names := make([]string, 0, len(e.Status))
		for n := range e.Status {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if e.Status[n] != bus.StatusQueued {
				f.appendLocked(Frame{Type: TypeReceipt, ID: e.ID, Name: n, Status: e.Status[n], Reason: e.Reasons[n], At: stageAt(e, n)})
			}
		}
		return nil
	}
	if !ok {
		c := cloneEntry(&e)
		f.msgs[e.ID] = &c
		f.order = append(f.order, e.ID)
		if len(f.order) > f.keepN {
			f.dropped = max(f.dropped, f.msgs[f.order[0]].Seq)
			delete(f.msgs, f.order[0])
			f.order = f.order[1:]
		}
		f.appendLocked(Frame{Type: TypeMessage, Message: toMessage(cloneEntry(&e), MaxFrameBody)})
		return nil
	}
	names := make([]string, 0, len(e.Status))
	for n := range e.Status {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		st, reason := e.Status[n], e.Reasons[n]
		if prev, seen := old.Status[n]; seen && prev == st && old.Reasons[n] == reason {
			continue
		}
		f.appendLocked(Frame{Type: TypeReceipt, ID: e.ID, Name: n, Status: st, Reason: reason, At: stageAt(e, n)})
	}
	old.Status, old.Reasons, old.Stages = maps.Clone(e.Status), maps.Clone(e.Reasons), slices.Clone(e.Stages)
	return nil
}

// message returns a message the feed keeps, whole.
func (f *feed) message(id string) (bus.Entry, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.msgs[id]
	if !ok {
		return bus.Entry{}, false
	}
	return cloneEntry(e), true
}

func cloneEntry(e *bus.Entry) bus.Entry {
	c := *e
	c.Status = maps.Clone(e.Status)
	c.Reasons = maps.Clone(e.Reasons)
	c.Stages = slices.Clone(e.Stages)
	return c
}

// stageAt is when e reached its latest status at recipient n (zero when
// the log has no time for it).
func stageAt(e bus.Entry, n string) time.Time {
	for i := len(e.Stages) - 1; i >= 0; i-- {
		if s := e.Stages[i]; s.Agent == n && s.Stage == e.Status[n] {
			return s.At
		}
	}
	return time.Time{}
}

func (f *feed) addMemory(fr Frame) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.appendLocked(fr)
	fr.Seq = f.seq
	f.mems = append(f.mems, fr)
	if len(f.mems) > keepMemories {
		f.mems = f.mems[1:]
	}
}

func (f *feed) onScreen(m *nats.Msg) {
	var s bus.Screen
	if err := json.Unmarshal(m.Data, &s); err != nil || bus.ValidName("agent", s.Agent) != nil {
		return
	}
	f.mu.Lock()
	f.screens[s.Agent] = s
	close(f.scrNote)
	f.scrNote = make(chan struct{})
	f.mu.Unlock()
}

// watchScreen asks agent's wrapper for its screen; none when agent is "".
func (f *feed) watchScreen(agent string) {
	if agent == "" {
		return
	}
	if err := f.c.WatchScreen(agent); err != nil {
		f.log.Debug("ask for a screen", "agent", agent, "err", err)
	}
}

// screen returns the last screen of agent and the channel closed at the
// next screen of any agent.
func (f *feed) screen(agent string) (bus.Screen, bool, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.screens[agent]
	return s, ok, f.scrNote
}
