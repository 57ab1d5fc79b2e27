package agents

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/relayhq/relay/internal/mailbox"
	"github.com/relayhq/relay/internal/patterns"
)

// A ReplyFile is an agent's own record of its session, which it writes as
// it works: Codex's rollout file, Gemini CLI's chat transcript. It holds
// the exact markdown of each reply, where the screen shows it rendered.
type ReplyFile interface {
	// Read returns the replies finished and the prompts that reached the
	// model since the last call. idle says the agent's turn has ended, so
	// that its last reply is final.
	Read(idle bool) (replies, prompts []string, err error)
}

// exactState is where a replyFollower stands.
type exactState int

const (
	exactPending exactState = iota // looking for the file; screen commands wait
	exactOn                        // the file gives the commands; the screen is a copy
	exactOff                       // no file: the screen gives the commands
)

// Timings of a replyFollower.
const (
	// followEvery is how often the file is looked for, and read while it
	// gives something; followSlow how often at least while it gives
	// nothing. Each look is a wake-up and eight system calls (open, seek,
	// read, close and their fcntls): ten a second cost a thinking or idle
	// Codex's wrapper more than everything else it does (issue 34,
	// BenchmarkThinkingCPU). The pace doubles from one to the other with
	// each look that finds nothing, and is fast again at once when the
	// file gives something or a reason to look comes: the turn's end
	// (Idle), a command on the screen (Screen), a prompt relay typed and
	// waits to see in the record (Hurry).
	followEvery = 100 * time.Millisecond
	followSlow  = time.Second
	// followHurry is how long a reason to look keeps the fast pace.
	followHurry = 2 * time.Second
	// followDue is how long a command seen on the screen waits for the
	// file to show up. A reply on the screen means its prompt was sent,
	// and both CLIs have their file by then, so the wait ends at once in
	// practice; past it, relay reads the screen only and says so.
	followDue = 5 * time.Second
)

// Follower is the Source of a CLI that writes a ReplyFile. It reads an agent's exact replies from its ReplyFile, beside
// the screen, so that commands come from the markdown the model wrote
// (escapes, fences and all) and fire once. Until the file is found the
// commands the screen sees are held, not fired: when the file turns up
// they come from it; when it does not (an old CLI, a resumed session relay
// cannot follow), they are fired from the screen, once, and the screen
// stays the source for the session.
type Follower struct {
	what string                           // the file, for people: "Codex's rollout file"
	find func(pid int) (ReplyFile, error) // wraps fs.ErrNotExist while there is none yet
	// Set by Run from its Sink (by tests directly).
	pid   func() int
	fire  func(replies, prompts []string)
	flush func([]patterns.Command) // the held screen commands, when giving up
	log   *slog.Logger
	now   func() time.Time
	due   time.Duration
	// fast and slow are followEvery and followSlow (tests change them).
	fast, slow time.Duration

	mu     sync.Mutex
	state  exactState
	held   []patterns.Command
	heldAt time.Time
	file   ReplyFile
	wake   mailbox.Signal
	news   bool      // the last poll found the file or read something from it
	fastTo time.Time // keep the fast pace until then (hurry)
}

// NewFollower returns the Source of a ReplyFile, in the pending state:
// what names the file for people ("Codex's rollout file"); find looks for
// it, given the agent's process id, and wraps fs.ErrNotExist while there
// is none yet.
func NewFollower(what string, find func(pid int) (ReplyFile, error), log *slog.Logger) *Follower {
	return &Follower{what: what, find: find, log: log, now: time.Now, due: followDue, fast: followEvery, slow: followSlow, wake: mailbox.NewSignal()}
}

// Screen takes a command the screen saw: true when the follower keeps it
// (held while pending, dropped as a copy when on), false when the screen
// is the source.
func (f *Follower) Screen(c patterns.Command) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.state {
	case exactPending:
		if len(f.held) == 0 {
			f.heldAt = f.now()
		}
		f.held = append(f.held, c)
		return true
	case exactOn:
		// A copy; the file has the command too, or soon will: read it
		// at the fast pace.
		f.hurry()
		return true
	}
	return false
}

// Active reports whether the file gives the commands.
func (f *Follower) Active() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state == exactOn
}

// Idle asks for a read now: the agent's turn ended.
func (f *Follower) Idle() { f.wake.Notify() }

// Hurry asks for a read now and at the fast pace for a while after: relay
// typed a prompt and waits to see it reach the model in the record.
func (f *Follower) Hurry() {
	f.mu.Lock()
	f.hurry()
	f.mu.Unlock()
}

// hurry is Hurry with f.mu held.
func (f *Follower) hurry() {
	f.fastTo = f.now().Add(followHurry)
	f.wake.Notify()
}

// Run follows the file until ctx ends.
func (f *Follower) Run(ctx context.Context, sink Sink) error { return f.follow(ctx, sink) }

// follow is Run with the part of the sink it uses.
func (f *Follower) follow(ctx context.Context, sink FileSink) error {
	f.pid = sink.Pid
	f.fire = func(replies, prompts []string) {
		if len(prompts) > 0 {
			sink.Prompted(prompts)
		}
		if len(replies) > 0 {
			sink.Texts(replies)
		}
	}
	f.flush = sink.Commands
	every := f.fast
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-f.wake:
			every = f.fast
		}
		if !f.poll(sink.Idle()) {
			return nil
		}
		f.mu.Lock()
		fast := f.news || f.state == exactPending || f.now().Before(f.fastTo)
		f.mu.Unlock()
		if fast {
			every = f.fast
		} else {
			every = min(2*every, max(f.slow, f.fast))
		}
		t.Reset(every)
	}
}

// poll is one step: look for the file, or read what it gained. It returns
// false once there is nothing more to do (the screen is the source).
func (f *Follower) poll(idle bool) bool {
	f.mu.Lock()
	state, file := f.state, f.file
	f.news = false
	f.mu.Unlock()
	switch state {
	case exactOff:
		return false
	case exactPending:
		found, err := f.find(f.pid())
		switch {
		case err == nil:
			f.mu.Lock()
			f.state, f.file, f.held, f.news = exactOn, found, nil, true
			f.mu.Unlock()
			f.log.Info(f.what + " found: commands come from its exact text, not the screen")
			file = found
		case !errors.Is(err, fs.ErrNotExist):
			f.giveUp(err)
			return false
		default:
			f.mu.Lock()
			late := len(f.held) > 0 && f.now().Sub(f.heldAt) >= f.due
			f.mu.Unlock()
			if late {
				f.giveUp(err)
				return false
			}
			return true
		}
	}
	replies, prompts, err := file.Read(idle)
	if err != nil {
		f.log.Warn(f.what, "err", err)
	}
	if len(replies)+len(prompts) > 0 {
		f.mu.Lock()
		f.news = true
		f.mu.Unlock()
		f.fire(replies, prompts)
	}
	return true
}

// giveUp makes the screen the source and fires what it held.
func (f *Follower) giveUp(why error) {
	f.mu.Lock()
	f.state = exactOff
	held := f.held
	f.held = nil
	f.mu.Unlock()
	f.log.Warn("no "+f.what+"; reading the screen only", "why", why)
	if len(held) > 0 {
		f.flush(held)
	}
}
