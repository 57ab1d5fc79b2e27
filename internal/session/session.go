// This file wires the stages: Run, start, and the exact source's sink.

package session

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/scanner"
	"github.com/relayhq/relay/internal/statedir"
	"github.com/relayhq/relay/internal/termsafe"
	"github.com/relayhq/relay/internal/wrapper"
)

// ErrNameTaken is returned by Run when a live agent of the workspace
// already has the name that was asked for.
var ErrNameTaken = bus.ErrNameTaken

// screenModel is the scanner as the session uses it.
type screenModel interface {
	Text() string
	Title() string
	State() scanner.State
	BracketedPaste() bool
	// OwnText is Text without the rows relay or the human typed on.
	OwnText() string
	// BeginInjection and EndInjection bracket relay's typing: what the
	// child prints meanwhile is the typed text, never a command.
	BeginInjection(text string)
	EndInjection()
	// Injection numbers the injection under way; EndInjectionOf ends that
	// one only, in the order of the output.
	Injection() uint64
	EndInjectionOf(n uint64)
	// CursorRow is the cursor's row left of the cursor and from it on,
	// and whether a full-screen program drew it (shellstate.go).
	CursorRow() (before, after string, alt bool)
}

// typist is the single writer of the child's stdin.
type typist interface {
	Inject(fn func(write func([]byte) error) error) error
	LastHuman() time.Time
	// ReleaseLine takes the human's line for empty when empty says so.
	ReleaseLine(empty func() bool) bool
}

// Session is one wrapped agent at run time: the wiring of its stages.
// Each stage is a type of its own, which says in its doc comment which
// goroutine owns each of its fields and how the others are guarded (the
// package doc has the rule for the whole).
type Session struct {
	cfg  Config       // read-only
	log  *slog.Logger // read-only
	spec spec         // what runs: set before the stages start, read-only after
	grp  group        // starts every goroutine of the session

	owner  owner        // the owner goroutine and its state (state.go)
	link   hubLink      // the hub: client, local hub, identity, outbox, presence, screen (connect.go)
	child  child        // the running child as the wrapper gives it (set before the stages start)
	typing typingStage  // typing into the child and confirming it (typing.go)
	inbox  inboxStage   // incoming messages until typed (inbox.go)
	events eventStage   // slow reactions: Idle, Output and other handlers (events.go)
	cmds   commandStage // the commands the agent wrote, to the handlers (cmdqueue.go)
	end    ending       // relay stop and the child's exit (stop.go)
}

// spec is what the session runs, fixed before its stages start and
// read-only after, by any goroutine.
type spec struct {
	sid     string
	prof    agents.Profile
	command []string           // the child's command line
	reg     *patterns.Registry // the command namespaces
	src     agents.Source      // nil: the screen gives the commands
}

// child is the running child as the wrapper gives it: set once, before
// the stages start, read-only after (the values themselves are safe for
// concurrent use).
type child struct {
	scr screenModel
	in  typist
	pid func() int
	fg  func() (int, error) // the terminal's foreground process group; nil: not known
	tap *wrapper.Tap        // the child's output as the scanner reads it
	// size is the child's terminal size now; nil: not known.
	size func() (cols, rows int)
	// human says relay's own lines to the human (refused.go): on stderr
	// until the wrapper runs, through it after. Its own lock.
	human humanLines
}

// newSession returns a session whose owner runs until ctx ends.
func newSession(ctx context.Context, cfg Config) *Session {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Session{
		cfg: cfg, log: cfg.Logger, grp: &termGroup{},
		spec:   spec{sid: newID(), prof: cfg.Profile},
		owner:  newOwner(),
		link:   newHubLink(),
		typing: newTypingStage(),
		inbox:  newInboxStage(),
		events: newEventStage(time.Now()),
		cmds:   newCommandStage(cfg.Damping),
		end:    newEnding(),
	}
	// Starting is real work: its first idle period has an Idle event.
	st := &state{name: cfg.Name, busy: true, lastFrom: map[string]received{}}
	s.grp.Go(func() { s.owner.run(ctx, st) })
	return s
}

// Run runs the agent until it exits and returns its exit code (128+n when
// signal n killed it).
func Run(ctx context.Context, cfg Config) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A command that is not there starts nothing: no hub is left behind.
	if _, err := LookPath(cfg.Command, cfg.Env, cfg.Dir); err != nil {
		return 0, err
	}
	s := newSession(ctx, cfg)
	defer s.link.local.close() // when Run returns before closeAll

	// The signals that end a session are caught from here to the end: one
	// during start-up ends the session before the agent starts (with the
	// status 128+n), one while the agent runs reaches it (the wrapper), and
	// one during shutdown cannot cut short the sending of what it wrote.
	sigs := wrapper.CatchSignals()
	defer sigs.Stop()
	s.end.sigs = sigs
	startCtx, endStart := untilSignal(ctx, sigs, s.grp)
	defer endStart()

	// Join the team first (briefly), so that a name clash is said before
	// the agent starts and the primer can name the peers; or, when nothing
	// the child is given waits for the hub's answer (overlapStart),
	// connect only and claim the name while the child starts.
	var err error
	overlap := s.overlapStart()
	var hubOpts bus.Options
	var dialed *bus.Client
	if !s.alone() {
		cctx, ccancel := context.WithTimeout(startCtx, connectWait)
		if overlap {
			hubOpts, dialed, err = s.reach(cctx, cfg.Name)
			overlap = err == nil
		} else {
			err = s.connect(cctx)
		}
		ccancel()
	}
	if sig, ok := sigs.Caught(); ok {
		if dialed != nil {
			dialed.Close()
		}
		s.closeAll() // leaves the team it may have joined
		return s.signalled(sig), nil
	}
	if err := s.refusal(err); err != nil {
		return 0, err
	}
	name := s.name()
	if err := s.openJournal(name); err != nil {
		if dialed != nil {
			dialed.Close()
		}
		return 0, err
	}
	defer s.closeAll()
	if overlap {
		s.link.claim = newClaim()
		s.link.ident.hubAuth(hubOpts.URL, hubOpts.TLSPin, hub.Credential{})
		s.do(func(st *state) { st.url = hubOpts.URL })
		s.beginClaim(ctx, dialed, hubOpts)
	}

	env := cfg.Env
	if env == nil {
		env = os.Environ()
	}
	// The child gets its own credential (the identity file), never the
	// workspace token.
	env = withoutVar(env, "RELAY_TOKEN")
	if !s.alone() {
		idEnv, err := s.startAgentFile(ctx, name)
		if errors.Is(err, statedir.ErrUnsafe) {
			return 0, fmt.Errorf("%s was not started: %w", name, err)
		}
		if err != nil {
			// A full disk, say: the agent still runs, but the relay
			// commands it runs cannot act as it. Said, not fatal.
			s.log.Warn("no identity file for the agent", "err", err)
			fmt.Fprintf(s.stderr(), "relay: %s: the relay commands the agent runs will not act as it: %s.\n", termsafe.Line(name), termsafe.Line(err.Error()))
		}
		env = append(env, idEnv...)
	}
	env = append(env,
		"RELAY_NAME="+name,
		"RELAY_SESSION_ID="+s.spec.sid,
		"RELAY_WORKSPACE="+cfg.Workspace,
		"RELAY_HOME="+cfg.Home,
	)
	var url string
	s.read(func(st *state) { url = st.url })
	if url != "" {
		env = append(env, "RELAY_HUB="+url)
	}

	args := cfg.Args
	primer := ""
	if s.spec.prof.Model && !cfg.NoPrimer {
		text := s.primer(startCtx, name)
		args = s.spec.prof.Args(args, text)
		if s.spec.prof.TypePrimer {
			primer = text
		}
	}
	started := time.Now()
	if s.spec.prof.Exact != nil {
		setup, err := s.spec.prof.Exact(agents.Launch{
			Command: cfg.Command, Args: cfg.Args, Env: env, Dir: s.workDir(), Home: cfg.Home,
			RelayBinary: s.relayBinary(), Steer: cfg.Delivery == delivery.ModeSteer,
			BeforeToolCall: s.hasHandlers(BeforeToolCall), MCP: s.mcpServer(name),
			Started: started, Log: s.log,
		})
		if err != nil {
			s.log.Warn("reading its screen only", "why", err)
		} else {
			args = append(setup.Args, args...)
			env = append(env, setup.Env...)
			s.spec.src = setup.Source
		}
	}

	tap := wrapper.NewTap(0)
	s.child.tap = tap
	s.spec.reg = s.registry()
	scan := scanner.New(scanner.Options{Namespaces: s.spec.reg.Namespaces(), Cues: s.spec.prof.Cues})
	// A spinner's frames wait in the tap while the scanner can read them
	// later: one pass for several (scanner.CanWait).
	tap.SetHold(scan.CanWait, scan.MaxWait())
	s.spec.command = append([]string{cfg.Command}, args...)
	ws, err := wrapper.Start(wrapper.Options{
		Command:  s.spec.command,
		Dir:      cfg.Dir,
		Env:      env,
		Stdin:    cfg.Stdin,
		Stdout:   cfg.Stdout,
		Tap:      tap,
		OnResize: func(c, rows int) { scan.Resize(c, rows) },
		// The human's unfinished line holds delivery on every profile, and
		// what the child echoes meanwhile is not its own output.
		OnHumanLine: s.onHumanLine,
		// In the order of the output: the echo of the human's keys is
		// theirs, what the child prints after their Enter its own.
		HumanLineInOutput: func(on bool) {
			if on {
				// The screen as the human's first key found it shows
				// the shell's primary prompt (shellstate.go).
				s.learnPromptBeforeKey()
			}
			scan.HumanTyping(on)
		},
		Logger:  s.log,
		Signals: sigs,
	})
	var se *wrapper.SignalError
	if errors.As(err, &se) {
		return s.signalled(se.Signal), nil
	}
	if err != nil {
		return 0, err
	}
	endStart()
	gone := ws.Gone
	s.end.gone.Store(&gone)
	s.child.human.attach(ws)
	claimSeen := make(chan struct{}) // closed once a refusal is known (or not)
	if overlap {
		s.grp.Go(func() {
			defer close(claimSeen)
			s.awaitClaim(ctx, ws.End)
		})
	} else {
		close(claimSeen)
	}
	s.child.scr, s.child.in, s.child.pid, s.child.fg, s.child.size = scan, ws.Input(), ws.Pid, ws.Foreground, ws.Size
	s.grp.(*termGroup).attach(ws) // a panic from now on restores the terminal
	s.start(ctx, primer)
	// Subscribe before the scanner runs: the agent's first output (and the
	// busy state it brings) must not be missed.
	scan.Subscribe(func(ev scanner.Event) { s.onScan(ev, scan) })
	scanned := make(chan struct{})
	s.grp.Go(func() {
		defer close(scanned)
		if err := scan.Run(ctx, s.watchOutput(notifying{tap, s.link.screen.changed})); err != nil && ctx.Err() == nil {
			s.log.Warn("scanner stopped", "err", err)
		}
	})
	s.grp.Go(func() { s.publishScreen(ctx, scan, ws.Size) })
	code := ws.Wait()
	s.end.ended.Store(true)
	close(s.end.exited)
	tap.Close()
	// What the agent wrote before it exited is read to the end and its
	// commands handled; closeAll then waits for the outbox.
	<-claimSeen // the claim's answer, bounded by connectWait
	s.lastWords(scanned)
	if r := s.end.refused.Load(); r != nil {
		return 0, *r
	}
	if !s.end.stopping.Load() {
		// The agent exited on its own: SessionEnd after the fact (what
		// its handlers answer is logged, it cannot be typed).
		s.fire(context.WithoutCancel(ctx), EventInfo{Event: SessionEnd, ExitCode: code})
	}
	return code, nil
}

// untilSignal returns a context that ends with ctx or at the first signal
// sigs catches, for the steps of start-up (joining the team, the primer).
func untilSignal(ctx context.Context, sigs *wrapper.Signals, grp group) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	grp.Go(func() {
		select {
		case <-sigs.Done():
			cancel()
		case <-ctx.Done():
		}
	})
	return ctx, cancel
}

// signalled is the exit status of a session that a signal ended before its
// agent started: the conventional 128+n.
func (s *Session) signalled(sig syscall.Signal) int {
	s.log.Info("signal before the agent started; it is not started", "signal", sig)
	return 128 + int(sig)
}

// start makes the delivery queue and starts the stages around the running
// child: commands → handlers; inbox → delivery queue → the child's stdin;
// the state owner's presence and jobs; the exact source.
func (s *Session) start(ctx context.Context, primer string) {
	qo := delivery.Options{
		Mode:       s.cfg.Delivery,
		HumanQuiet: s.cfg.HumanQuiet,
		Recheck:    2 * cmp.Or(s.spec.prof.Cues.QuietTime, scanner.DefaultQuietTime),
		Typist:     queueTypist{s},
		Journal:    s.inbox.journal,
	}
	if !s.spec.prof.Model {
		// A plain shell reads lines: each message its own line, and one
		// injection never longer than its terminal takes.
		qo.Join, qo.MaxInjection = "\r", delivery.MaxShellLine
		qo.Pipeline = shellPipeline
		// And never taller than its screen (pastefit.go).
		qo.Fits = s.shellFits
		// Typed only while the shell waits at its own prompt: queueTypist.Hold.
	}
	if d := s.deliverer(); d != nil {
		// Posted, not typed: the human's draft does not hold it back.
		qo.Direct = d.Direct
	}
	s.inbox.queue = delivery.NewQueue(qo)
	s.do(func(st *state) {
		st.started, st.primer, st.prompt = true, primer, s.cfg.Prompt
		st.presenceSent = false
		s.push(st)
	})
	s.grp.Go(func() { _ = s.inbox.queue.Run(ctx) })
	s.grp.Go(func() {
		defer close(s.cmds.done)
		s.handleCommands(ctx)
	})
	s.grp.Go(func() { s.events.jobs.run(ctx) })
	s.grp.Go(func() { s.runIdle(ctx) })
	s.grp.Go(func() { s.link.presence.run(ctx, s.link.client.Load, s.childGone, s.log) })
	s.grp.Go(func() { s.serveInbox(ctx) })
	s.grp.Go(func() { s.watchdog(ctx) })
	if empty := s.lineEmptyOnScreen(); empty != nil {
		s.grp.Go(func() { s.releaseHumanLine(ctx, empty) })
	}
	if s.spec.src != nil {
		s.grp.Go(func() {
			if err := s.spec.src.Run(ctx, sink{s, ctx}); err != nil && ctx.Err() == nil {
				s.log.Warn("exact source stopped", "err", err)
			}
		})
	}
	s.events.jobs.post(func(ctx context.Context) {
		// Not for a name the hub refused beside the starting child
		// (overlap.go): that session ends, and fires no SessionEnd.
		if !s.claimed(ctx) {
			return
		}
		s.fire(ctx, EventInfo{Event: SessionStart, Profile: s.spec.prof.Name, Command: s.spec.command})
	})
}

// onScan receives the scanner's events; it must not block for long.
func (s *Session) onScan(ev scanner.Event, scan *scanner.Scanner) {
	switch ev.Kind {
	case scanner.EventCommand:
		s.screenCommand(ev.Command)
	case scanner.EventState:
		s.onScreenState(ev.State, scan.Title())
	case scanner.EventSkipped:
		s.log.Warn("scanner fell behind and skipped output", "bytes", ev.Skipped, "total", scan.Skipped())
		if c := s.link.client.Load(); c != nil {
			c.SetSkipped(scan.Skipped())
		}
	}
}

// sink is the session as an exact source sees it.
type sink struct {
	s   *Session
	ctx context.Context
}

func (k sink) Texts(texts []string)      { k.s.exactTexts(k.ctx, texts) }
func (k sink) Prompted(prompts []string) { k.s.prompted(prompts) }
func (k sink) Commands(cmds []patterns.Command) {
	for _, c := range cmds {
		k.s.putCommand(c)
	}
}
func (k sink) Turn(t agents.Turn) { k.s.onTurn(t) }
func (k sink) ToolCall(ctx context.Context, tool string, input []byte) {
	k.s.fire(ctx, EventInfo{Event: ToolCall, Tool: tool, ToolInput: input})
}
func (k sink) BeforeToolCall(ctx context.Context, tool string, input []byte) agents.ToolVerdict {
	r := k.s.fire(ctx, EventInfo{Event: BeforeToolCall, Tool: tool, ToolInput: input})
	return agents.ToolVerdict{Block: r.Block, Reason: r.Reason, Context: r.Inject}
}
func (k sink) Idle() bool  { return k.s.idle() }
func (k sink) Pid() int    { return k.s.child.pid() }
func (k sink) Go(f func()) { k.s.grp.Go(f) }

// HandOver takes what waits in the delivery queue, joined, for a hook's
// answer; done puts it back on failure or marks it delivered.
func (k sink) HandOver() (string, func(error), bool) {
	q := k.s.inbox.queue
	items := q.Take()
	if len(items) == 0 {
		return "", nil, false
	}
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.Text
	}
	return strings.Join(texts, "\n\n"), func(err error) {
		if err != nil {
			q.Requeue(items)
			return
		}
		q.Handed(items)
	}, true
}

// relayBinary is the relay program that a CLI's hooks run: the configured
// executable when it is relay, else relay on PATH; "" when there is none.
func (s *Session) relayBinary() string {
	if exe := s.cfg.Executable; exe != "" && strings.HasPrefix(filepath.Base(exe), "relay") {
		return exe
	}
	if p, err := exec.LookPath("relay"); err == nil {
		return p
	}
	return ""
}

// workDir is the child's working folder, symbolic links resolved (as the
// CLIs record it).
func (s *Session) workDir() string {
	dir := s.dir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir
}

// withoutVar returns env without the entries of variable key.
func withoutVar(env []string, key string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
