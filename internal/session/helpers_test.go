package session

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/agents/shell"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/scanner"
)

// fakeScreen is the screen model of a program that shows nothing.
type fakeScreen struct {
	mu       sync.Mutex
	text     string
	injected []string
	open     int // injections begun and not ended
	// before, after and alt are what CursorRow returns.
	before, after string
	alt           bool
}

func (f *fakeScreen) Text() string          { f.mu.Lock(); defer f.mu.Unlock(); return f.text }
func (f *fakeScreen) Title() string         { return "" }
func (f *fakeScreen) OwnText() string       { return f.Text() }
func (f *fakeScreen) State() scanner.State  { return scanner.State{} }
func (f *fakeScreen) BracketedPaste() bool  { return false }
func (f *fakeScreen) MarkInjected(t string) { f.BeginInjection(t); f.EndInjection() }
func (f *fakeScreen) BeginInjection(t string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.injected = append(f.injected, t)
	f.open++
}
func (f *fakeScreen) EndInjection()         { f.mu.Lock(); f.open--; f.mu.Unlock() }
func (f *fakeScreen) Injection() uint64     { return 0 }
func (f *fakeScreen) EndInjectionOf(uint64) {}
func (f *fakeScreen) CursorRow() (before, after string, alt bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.before, f.after, f.alt
}

// fakeTypist records what is typed into the child.
type fakeTypist struct {
	mu    sync.Mutex
	typed strings.Builder
	// unfinished is the human's line for ReleaseLine; releases counts
	// its calls.
	unfinished bool
	releases   int
	// submitted is the human's last submit (LastSubmit); asked counts
	// the calls of LastSubmit.
	submitted time.Time
	asked     int
}

func (f *fakeTypist) Inject(fn func(write func([]byte) error) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fn(func(p []byte) error { f.typed.Write(p); return nil })
}
func (f *fakeTypist) LastHuman() time.Time { return time.Time{} }
func (f *fakeTypist) LastSubmit() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	return f.submitted
}
func (f *fakeTypist) ReleaseLine(empty func() bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releases++
	if !f.unfinished || !empty() {
		return false
	}
	f.unfinished = false
	return true
}
func (f *fakeTypist) String() string { f.mu.Lock(); defer f.mu.Unlock(); return f.typed.String() }

// testGroup runs a session's goroutines and fails the test on a panic that
// reaches it (the wrapper would restore the terminal and crash).
type testGroup struct {
	t  testing.TB
	wg sync.WaitGroup
}

func (g *testGroup) Go(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer func() {
			if p := recover(); p != nil {
				g.t.Errorf("a session goroutine panicked: %v", p)
			}
		}()
		f()
	}()
}

// rig is a session running against fakes (screen, typist) and, where the
// test gives one, a real hub.
type rig struct {
	s   *Session
	scr *fakeScreen
	ty  *fakeTypist
	ctx context.Context // the session's, for start
}

// startRig starts a session with cfg's hub (NoHub when empty) as a plain
// shell would run, and ends it with the test.
func startRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	r := newRig(t, cfg)
	r.start()
	return r
}

// newRig is startRig without starting the stages (rig.start), for a test
// that sets more of the session first.
func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	if cfg.Hub == "" {
		cfg.Hub = NoHub
	}
	if cfg.Name == "" {
		cfg.Name = "Alice"
	}
	if cfg.Workspace == "" {
		cfg.Workspace = "default"
	}
	cfg.Home = t.TempDir()
	if cfg.Profile.Name == "" {
		cfg.Profile = shell.Profile()
	}
	cfg.HumanQuiet = time.Millisecond
	if cfg.Damping == (delivery.DamperOptions{}) {
		cfg.Damping = delivery.DamperOptions{PairWindow: time.Minute, PairMax: 10000, AgentWindow: time.Minute, AgentMax: 10000, MaxHops: 8}
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &testGroup{t: t}
	t.Cleanup(func() {
		cancel()
		g.wg.Wait()
	})
	s := newSession(ctx, cfg)
	if !s.alone() {
		cctx, ccancel := context.WithTimeout(ctx, connectWait)
		if err := s.connect(cctx); err != nil {
			t.Logf("hub not reached at start: %v", err)
		}
		ccancel()
	}
	if err := s.openJournal(s.name()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.closeAll)
	r := &rig{s: s, scr: &fakeScreen{}, ty: &fakeTypist{}, ctx: ctx}
	s.child.scr, s.child.in, s.grp, s.child.pid = r.scr, r.ty, g, func() int { return 0 }
	return r
}

// start starts the stages of a rig from newRig.
func (r *rig) start() {
	r.s.spec.reg = r.s.registry()
	r.s.start(r.ctx, "")
}

// idle shows the agent idle (or busy) as its screen would.
func (r *rig) screenBusy(busy bool) { r.s.onScreenState(scanner.State{Busy: busy}, "") }

// waitTyped waits until the child was typed text holding want, as it is
// or in a shell line's form (delivery.ShellText: the rig's agent is a
// plain shell).
func (r *rig) waitTyped(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for typed := r.ty.String(); !strings.Contains(typed, want) && !strings.Contains(typed, delivery.ShellText(want)); typed = r.ty.String() {
		if time.Now().After(deadline) {
			t.Fatalf("never typed %q; typed:\n%s", want, r.ty.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// peer is another agent on the hub, reading its inbox.
type peer struct {
	c   *bus.Client
	mu  sync.Mutex
	got []string
}

func newPeer(t *testing.T, url, token, name string) *peer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := bus.Connect(ctx, bus.Options{URL: url, Token: token, Workspace: "default", Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Register(ctx); err != nil {
		t.Fatal(err)
	}
	p := &peer{c: c}
	go func() {
		_ = c.Inbox(ctx, func(_ context.Context, d *bus.Delivery) {
			p.mu.Lock()
			p.got = append(p.got, d.Envelope.Body)
			p.mu.Unlock()
			_ = d.Ack()
		})
	}()
	return p
}

func (p *peer) bodies() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.got...)
}

// waitFor polls check until it returns nil or 15 s pass.
func waitFor(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stateOf returns the agent's state as the hub lists it.
func stateOf(c *bus.Client, name string) (bus.State, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	list, err := c.Agents(ctx)
	if err != nil {
		return "", err
	}
	for _, p := range list {
		if p.Name == name {
			return p.State, nil
		}
	}
	return "", fmt.Errorf("%s not listed", name)
}
