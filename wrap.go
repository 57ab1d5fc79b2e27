package relay

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relayhq/relay/agents"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/config"
	"github.com/relayhq/relay/delivery"
	"github.com/relayhq/relay/hub"
	"github.com/relayhq/relay/memory"
	"github.com/relayhq/relay/patterns"
	"github.com/relayhq/relay/scanner"
	"github.com/relayhq/relay/wrapper"
)

// ErrNameTaken is returned by Wrap when a live agent of the workspace
// already has the name that was asked for.
var ErrNameTaken = bus.ErrNameTaken

// connectWait bounds how long Wrap waits for the hub before it starts the
// agent anyway (and keeps trying in the background).
const connectWait = 5 * time.Second

// Wrap runs the command as this relay's agent until it exits and returns
// its exit code (128+n when signal n killed it). The agent joins the team
// while it runs: what it writes is routed, what its peers send is typed in.
// When no hub can be reached the agent runs all the same, and relay keeps
// trying; what it sends meanwhile waits.
func (r *Relay) Wrap(ctx context.Context, command string, args ...string) (int, error) {
	prof, err := agents.For(r.opts.Profile, command)
	if err != nil {
		return 0, err
	}
	if r.opts.IdleQuiet > 0 {
		prof.Cues.QuietTime = r.opts.IdleQuiet
	}
	s := &session{
		r:        r,
		o:        r.opts,
		prof:     prof,
		sid:      newID(),
		log:      r.opts.Logger,
		lastFrom: map[string]received{},
		busy:     true, // starting: its first idle moment is an Idle event
		cmds:     newCmdQueue(),
	}
	s.name = r.opts.Name
	if s.name == "" {
		s.name = nameFromCommand(command)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Join the team first (briefly), so that a name clash is said before
	// the agent starts and the primer can name the peers.
	err = nil
	if !s.alone() {
		cctx, ccancel := context.WithTimeout(ctx, connectWait)
		err = s.connect(cctx, r.opts.Name == "")
		ccancel()
	}
	switch {
	case errors.Is(err, bus.ErrNameTaken):
		return 0, fmt.Errorf("%w: the name %q is taken by a live agent in workspace %q: choose another with --name", ErrNameTaken, s.name, s.o.Workspace)
	case errors.Is(err, bus.ErrUntrustedHub), errors.Is(err, bus.ErrUnauthorized):
		// Trying again would not help: say so before the agent starts
		// rather than run it cut off from its team.
		return 0, err
	case err != nil:
		s.log.Warn("hub not reachable; the agent starts alone and relay keeps trying", "err", err)
	}

	if err := s.open(); err != nil {
		return 0, err
	}
	defer s.close()

	childArgs := args
	if prof.Model && !s.o.NoPrimer {
		primer := s.primer(ctx)
		childArgs = prof.Args(args, primer)
		if prof.TypePrimer {
			s.primerText = primer
		}
	}
	var hookEnv []string
	if prof.Name == "claude" {
		if ok, why := s.claudeHooksOK(command); ok {
			var hookArgs []string
			hookArgs, hookEnv = s.startClaudeHooks()
			childArgs = append(hookArgs, childArgs...)
		} else {
			s.log.Warn("Claude Code's hooks are not used; reading its screen only", "why", why)
		}
	}
	geminiID, geminiOwn := "", false
	if prof.Name == "gemini" {
		id, add, err := agents.GeminiSession(args, newUUID)
		if err != nil {
			s.log.Warn("Gemini CLI's transcript is not followed; reading its screen only", "why", err)
		} else {
			geminiID, geminiOwn = id, len(add) == 0
			childArgs = append(add, childArgs...)
		}
	}
	env := s.o.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(env,
		"RELAY_NAME="+s.name,
		"RELAY_SESSION_ID="+s.sid,
		"RELAY_WORKSPACE="+s.o.Workspace,
		"RELAY_HOME="+s.o.Home,
	)
	if s.url != "" {
		env = append(env, "RELAY_HUB="+s.url)
	}
	env = append(env, hookEnv...)

	tap := wrapper.NewTap(0)
	started := time.Now()
	s.reg = s.registry()
	s.scan = scanner.New(scanner.Options{Namespaces: s.reg.Namespaces(), Cues: s.prof.Cues})
	ws, err := wrapper.Start(wrapper.Options{
		Command:  append([]string{command}, childArgs...),
		Dir:      s.o.Dir,
		Env:      env,
		Stdin:    s.o.Stdin,
		Stdout:   s.o.Stdout,
		Tap:      tap,
		OnResize: func(c, rows int) { s.scan.Resize(c, rows) },
		Logger:   s.log,
	})
	if err != nil {
		return 0, err
	}
	s.ws = ws
	s.command = append([]string{command}, childArgs...)
	switch {
	case prof.Name == "codex":
		s.follow = s.codexFollower(env, started)
	case geminiID != "":
		s.follow = s.geminiFollower(env, geminiID, geminiOwn)
	}
	s.start(ctx, tap)
	if lookupEnv(env, "RELAY_TEST_PANIC") == "1" {
		// For the tests of the terminal's restore after a panic.
		ws.Go(func() { panic("RELAY_TEST_PANIC") })
	}
	code := ws.Wait()
	tap.Close()
	s.fire(context.WithoutCancel(ctx), EventInfo{Event: SessionEnd, ExitCode: code})
	return code, nil
}

// session is one wrapped agent at run time.
type session struct {
	r    *Relay
	o    Options
	prof agents.Profile
	name string
	sid  string
	log  *slog.Logger

	url     string
	client  atomic.Pointer[bus.Client]
	ws      *wrapper.Session
	scan    *scanner.Scanner
	queue   *delivery.Queue
	journal *delivery.Journal
	damper  *delivery.Damper
	reg     *patterns.Registry
	cmds    *cmdQueue
	command []string // the wrapped command line
	hooks   *claudeHooks
	follow  *replyFollower // Codex, Gemini CLI: exact replies from their session file
	// primerText is typed once the agent is first ready, for CLIs that
	// take no primer flag; "" once typed.
	primerText string
	prompts    []string // the last prompts that reached the model (hooks)
	lastScreen string   // the screen at the last idle moment, for Output

	// The agent's state, from its screen and (Claude Code) its hooks.
	screen      scanner.State
	hooksOn     bool // the hooks arrive: they, not the screen, give commands and busy
	hookBusy    bool
	hookWaiting bool
	busy        bool // the last state pushed, for Idle events

	mu       sync.Mutex
	lastFrom map[string]received // the last message from each peer
	ready    bool                // the agent was idle once
	early    []pendingSend       // sent before the hub was first reached
	outbox   *bus.Outbox
}

// received notes a message from a peer, for the hop count of the answer.
type received struct {
	id   string
	hops int
	at   time.Time
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func nameFromCommand(cmd string) string {
	return bus.SafeName(filepath.Base(cmd), "agent")
}

// NoHub is the Options.Hub value that runs the agent alone, without a
// team: the wrapper, screen reading and handlers work; nothing is sent.
const NoHub = config.NoHub

func (s *session) alone() bool { return s.o.Hub == NoHub }

// connect reaches the hub and claims the name; with auto, a taken name is
// made unique with a number (claude-2, claude-3, ...).
func (s *session) connect(ctx context.Context, auto bool) error {
	url, token, pin := s.o.Hub, s.o.Token, ""
	var discover func() (string, error)
	if url == "" {
		discover = func() (string, error) {
			ep, err := hub.Discover(s.o.Home)
			return ep.URL, err
		}
		ep, err := hub.EnsureRunning(ctx, s.o.Home, s.o.Executable)
		if err != nil {
			return fmt.Errorf("start hub: %w", err)
		}
		url, token, pin = ep.URL, ep.Token, ep.TLSPin
	}
	s.url = url
	base := s.name
	for n := 1; ; n++ {
		name := base
		if n > 1 {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		c, err := bus.Connect(ctx, bus.Options{
			URL: url, Token: token, Creds: s.o.Creds, TLSCA: s.o.TLSCA, TLSPin: pin,
			Workspace: s.o.Workspace, Name: name,
			AckWait: 10 * time.Second, Discover: discover, Logger: s.log,
		})
		if err != nil {
			return err
		}
		err = c.Register(ctx)
		if errors.Is(err, bus.ErrNameTaken) && auto && n < 50 {
			c.Close()
			continue
		}
		if err != nil {
			c.Close()
			return err
		}
		s.name = name
		c.SetCLI(s.prof.CLI)
		s.client.Store(c)
		// Open the outbox now, not when the inbox starts: what the agent
		// writes in its first moments goes out at once, and it is not told
		// that a hub it has just reached is unreachable.
		s.startOutbox(c)
		return nil
	}
}

// peers lists the other agents online now, for the primer.
func (s *session) peers(ctx context.Context) []string {
	c := s.client.Load()
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
		if p.Name != s.name && p.State != bus.StateOffline {
			names = append(names, p.Name)
		}
	}
	return names
}

// primer is what the agent learns at start: the protocol, its peers and,
// if asked, the memories most relevant to its project.
func (s *session) primer(ctx context.Context) string {
	p := agents.Primer(s.name, s.o.Workspace, s.peers(ctx))
	c := s.client.Load()
	if s.o.MemoryAtStart <= 0 || c == nil {
		return p
	}
	dir := s.o.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	mctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	api := memory.NewClient(c.Conn(), memory.DefaultSubjectPrefix)
	ms, err := memory.Relevant(mctx, api, s.o.Workspace, dir, s.o.MemoryAtStart)
	if err != nil {
		s.log.Warn("memories for the primer", "err", err)
		return p
	}
	if m := memory.FormatRelevant(ms, time.Now()); m != "" {
		p += "\n\n" + m
	}
	return p
}

// open prepares what outlives a crash: the delivery journal.
func (s *session) open() error {
	dir := filepath.Join(s.o.Home, "agents", s.o.Workspace, s.name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create agent folder %s: %w", dir, err)
	}
	j, err := delivery.OpenJournal(filepath.Join(dir, "delivered"))
	if err != nil {
		return err
	}
	s.journal = j
	return nil
}

func (s *session) close() {
	s.mu.Lock()
	ob := s.outbox
	s.mu.Unlock()
	if ob != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		if err := ob.Close(ctx); err != nil {
			s.log.Warn("messages still in the outbox at exit", "n", ob.Len(), "err", err)
		}
		cancel()
	}
	if c := s.client.Load(); c != nil {
		c.Close()
	}
	if s.journal != nil {
		s.journal.Close()
	}
}

// start wires the stages around the running child: tap → scanner →
// commands → handlers; inbox → delivery queue → the child's stdin.
func (s *session) start(ctx context.Context, tap *wrapper.Tap) {
	s.damper = delivery.NewDamper(s.o.Damping)
	s.queue = delivery.NewQueue(delivery.Options{
		Mode:       s.o.Delivery,
		HumanQuiet: s.o.HumanQuiet,
		Recheck:    2 * cmp.Or(s.prof.Cues.QuietTime, scanner.DefaultQuietTime),
		LastHuman:  s.ws.Input().LastHuman,
		Type:       s.typeText,
		Confirm:    s.confirmer(),
		Journal:    s.journal,
	})
	s.scan.Subscribe(s.onScan)
	s.ws.Go(func() {
		if err := s.scan.Run(ctx, tap); err != nil && ctx.Err() == nil {
			s.log.Warn("scanner stopped", "err", err)
		}
	})
	s.ws.Go(func() { _ = s.queue.Run(ctx) })
	s.ws.Go(func() { s.handleCommands(ctx) })
	s.ws.Go(func() { s.serveInbox(ctx) })
	s.ws.Go(func() { s.publishScreen(ctx) })
	if s.hooks != nil {
		s.ws.Go(func() { s.hooks.serve(ctx) })
	}
	if s.follow != nil {
		s.ws.Go(func() { s.follow.run(ctx, s.idle) })
	}
	s.fire(ctx, EventInfo{Event: SessionStart, Profile: s.prof.Name, Command: s.command})
}

// onScan receives the scanner's events; it must not block.
func (s *session) onScan(ev scanner.Event) {
	switch ev.Kind {
	case scanner.EventCommand:
		if s.hooksActive() || (s.follow != nil && s.follow.hold(ev.Command)) {
			return // the exact text gives the commands: the screen is only a copy
		}
		s.cmds.put(ev.Command)
	case scanner.EventState:
		titleOK := s.prof.ReadyTitle == "" || strings.Contains(s.scan.Title(), s.prof.ReadyTitle)
		s.mu.Lock()
		s.screen = ev.State
		if !ev.State.Busy && titleOK {
			s.ready = true
		}
		s.mu.Unlock()
		s.pushState()
	case scanner.EventSkipped:
		s.log.Warn("scanner fell behind and skipped output", "bytes", ev.Skipped, "total", s.scan.Skipped())
		if c := s.client.Load(); c != nil {
			c.SetSkipped(s.scan.Skipped())
		}
	}
}

func (s *session) hooksActive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hooksOn
}

// exactActive reports whether commands come from the agent's exact text
// (Claude Code's hooks, or a session file), not from the screen.
func (s *session) exactActive() bool {
	return s.hooksActive() || (s.follow != nil && s.follow.active())
}

// idle reports whether the agent was idle at the last state change.
func (s *session) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.busy
}

func (s *session) setHooksActive(on bool) {
	s.mu.Lock()
	s.hooksOn = on
	if on {
		s.ready = true
	}
	s.mu.Unlock()
	s.pushState()
}

// setHookState records the state the hooks report.
func (s *session) setHookState(busy, waiting bool) {
	s.mu.Lock()
	s.hookBusy, s.hookWaiting = busy, waiting
	s.mu.Unlock()
	s.pushState()
}

// pushState tells the delivery queue and the hub what the agent is doing:
// busy and waiting from the hooks when they arrive, else from the screen;
// a draft always from the screen.
func (s *session) pushState() {
	s.mu.Lock()
	st := delivery.State{Ready: s.ready, Busy: s.screen.Busy, Draft: s.screen.Draft, Waiting: s.screen.Waiting}
	if s.hooksOn {
		st.Busy, st.Waiting = s.hookBusy, s.hookWaiting
	}
	becameIdle := s.busy && !st.Busy
	s.busy = st.Busy
	primer := ""
	if st.Ready && !st.Busy && s.queue != nil {
		primer, s.primerText = s.primerText, ""
	}
	s.mu.Unlock()
	if s.queue == nil {
		return
	}
	if primer != "" {
		// Typed like a message, before anything else waiting.
		s.queue.Requeue([]delivery.Item{{Text: "[relay] " + primer}})
	}
	s.queue.SetState(st)
	if becameIdle && s.follow != nil {
		s.follow.poke()
	}
	if becameIdle {
		go func() {
			ctx := context.Background()
			if !s.exactActive() && len(s.r.eventHandlers(Output)) > 0 {
				s.outputLines(ctx, s.newScreenLines(s.scan.Text()))
			}
			s.fire(ctx, EventInfo{Event: Idle})
		}()
	}
	if c := s.client.Load(); c != nil {
		bst := bus.StateIdle
		switch {
		case st.Waiting:
			bst = bus.StateWaiting
		case st.Busy:
			bst = bus.StateBusy
		}
		go c.SetState(context.Background(), bst)
	}
}

// notice types a short note from relay into the agent.
func (s *session) notice(text string) {
	if s.prof.EscapeMentions {
		text = delivery.EscapeMentions(text)
	}
	s.queue.Add(delivery.Item{Text: s.label(delivery.Notice(text, 0))})
}

// label adapts text for the agent: model agents read it as it is; a plain
// shell gets one line made a comment, so that nothing a peer writes can run
// as a shell command.
func (s *session) label(text string) string {
	if s.prof.Model {
		return text
	}
	return "# " + delivery.OneLine(text)
}

// fire runs the handlers of an event in order, types what they return, and
// returns their merged verdict (for MessageReceived): a block or a stop
// ends the chain, the last rewrite wins.
func (s *session) fire(ctx context.Context, e EventInfo) Result {
	e.Agent, e.SessionID, e.Workspace = s.name, s.sid, s.o.Workspace
	var out Result
	for _, h := range s.r.eventHandlers(e.Event) {
		res, err := h(ctx, e)
		if err != nil {
			s.log.Warn("event handler", "event", e.Event, "err", err)
			continue
		}
		if res.Inject != "" && s.queue != nil {
			s.notice(res.Inject)
		}
		if res.Message != nil {
			out.Message = res.Message
			e.Body = *res.Message
		}
		out.Hold = out.Hold || res.Hold
		if res.Block {
			out.Block, out.Reason = true, res.Reason
			return out
		}
		if res.Stop {
			out.Stop = true
			return out
		}
	}
	return out
}

func (s *session) match(c patterns.Command) Match {
	return Match{Namespace: c.NS, Target: c.Target, Body: c.Body, Agent: s.name, SessionID: s.sid, Workspace: s.o.Workspace}
}

// lookupEnv returns the value of key in env (KEY=VALUE entries).
func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// screenEvery is how often the agent's screen is published for the
// dashboard, when it changed.
const screenEvery = 500 * time.Millisecond

// publishScreen shows the agent's current screen, as text, to whoever
// watches it (the dashboard), at most twice a second and only on change.
func (s *session) publishScreen(ctx context.Context) {
	t := time.NewTicker(screenEvery)
	defer t.Stop()
	var last string
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c := s.client.Load()
		if c == nil {
			continue
		}
		text := s.scan.Text()
		if text == last {
			continue
		}
		last = text
		cols, rows := s.ws.Size()
		if err := c.PublishScreen(bus.Screen{Cols: cols, Rows: rows, Text: text, At: time.Now()}); err != nil {
			s.log.Debug("publish screen", "err", err)
		}
	}
}
