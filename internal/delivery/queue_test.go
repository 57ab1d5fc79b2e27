package delivery

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// typist records what the queue typed.
type typist struct {
	mu    sync.Mutex
	typed []string
	fail  int // fail this many calls first
	// during, if set, runs once while the first text is being typed.
	during func()
}

func (ty *typist) Type(ctx context.Context, in *Injection) error {
	ty.mu.Lock()
	during := ty.during
	ty.during = nil
	ty.mu.Unlock()
	if during != nil {
		during()
	}
	ty.mu.Lock()
	defer ty.mu.Unlock()
	if ty.fail > 0 {
		ty.fail--
		return errors.New("pty gone")
	}
	ty.typed = append(ty.typed, in.Text)
	return nil
}

func (ty *typist) got() []string {
	ty.mu.Lock()
	defer ty.mu.Unlock()
	return append([]string(nil), ty.typed...)
}

type receipts struct {
	mu  sync.Mutex
	log []string
}

func (r *receipts) done(id string) func(Status, string) {
	return func(st Status, reason string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.log = append(r.log, strings.TrimSpace(fmt.Sprintf("%s %s %s", id, st, reason)))
	}
}

func (r *receipts) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

var idle = State{Ready: true}

func texts(b []Item) []string {
	var s []string
	for _, it := range b {
		s = append(s, it.Text)
	}
	return s
}

// TestNextDecides checks when the queue types, step by step, without
// running it: each case sets a state and says what next must return.
func TestNextDecides(t *testing.T) {
	clock := newFakeClock()
	var human time.Time
	for _, tc := range []struct {
		name     string
		mode     Mode
		state    State
		humanAgo time.Duration // 0: never typed
		items    []string
		want     []string
		wantWait time.Duration
	}{
		{name: "idle agent takes all (batch, the default)", state: idle, items: []string{"a", "b"}, want: []string{"a", "b"}},
		{name: "wait mode takes one", mode: ModeWait, state: idle, items: []string{"a", "b"}, want: []string{"a"}},
		{name: "not started yet", state: State{}, items: []string{"a"}},
		{name: "busy agent waits", state: State{Ready: true, Busy: true}, items: []string{"a"}},
		{name: "draft in the input box waits", state: State{Ready: true, Draft: true}, items: []string{"a"}},
		{name: "permission prompt waits", state: State{Ready: true, Waiting: true}, items: []string{"a"}},
		{name: "human typed just now", state: idle, humanAgo: 500 * time.Millisecond, items: []string{"a"}, wantWait: 1500 * time.Millisecond},
		{name: "human quiet long enough", state: idle, humanAgo: 3 * time.Second, items: []string{"a"}, want: []string{"a"}},
		{name: "queue mode coalesces", mode: ModeQueue, state: idle, items: []string{"a", "b", "c"}, want: []string{"a", "b", "c"}},
		{name: "steer types while busy", mode: ModeSteer, state: State{Ready: true, Busy: true}, items: []string{"a"}, want: []string{"a"}},
		{name: "steer still respects a draft", mode: ModeSteer, state: State{Ready: true, Busy: true, Draft: true}, items: []string{"a"}},
		{name: "nothing pending", state: idle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			human = time.Time{}
			if tc.humanAgo > 0 {
				human = clock.Now().Add(-tc.humanAgo)
			}
			q := NewQueue(Options{Mode: tc.mode, Clock: clock, Typist: with{Typist: &typist{}, lastHuman: func() time.Time { return human }}})
			for _, s := range tc.items {
				q.Add(Item{Text: s})
			}
			q.SetState(tc.state)
			batch, wait := q.next()
			if got := texts(batch); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("typed %q, want %q", got, tc.want)
			}
			if wait != tc.wantWait {
				t.Errorf("wait %v, want %v", wait, tc.wantWait)
			}
		})
	}
}

// TestWaitModeOneMessagePerIdleMoment: after typing, the next message waits
// until the agent has reacted (busy) and is idle again.
func TestWaitModeOneMessagePerIdleMoment(t *testing.T) {
	clock := newFakeClock()
	q := NewQueue(Options{Mode: ModeWait, Clock: clock, Typist: &typist{}})
	q.Add(Item{Text: "one"})
	q.Add(Item{Text: "two"})
	q.SetState(idle)
	if b, _ := q.next(); len(b) != 1 || b[0].Text != "one" {
		t.Fatalf("first: %v", texts(b))
	}
	q.deliver(context.Background(), nil)
	if b, _ := q.next(); b != nil {
		t.Fatalf("typed %v before the agent showed a new idle moment", texts(b))
	}
	q.SetState(State{Ready: true, Busy: true}) // reacts to "one"
	q.SetState(idle)                           // done with it
	if b, _ := q.next(); len(b) != 1 || b[0].Text != "two" {
		t.Fatalf("second: %v", texts(b))
	}
}

// TestWaitModeRecheck: an agent that never shows a reaction (a plain shell
// reading lines) still gets the next message after Recheck.
func TestWaitModeRecheck(t *testing.T) {
	clock := newFakeClock()
	q := NewQueue(Options{Mode: ModeWait, Clock: clock, Recheck: time.Second, Typist: &typist{}})
	q.Add(Item{Text: "one"})
	q.Add(Item{Text: "two"})
	q.SetState(idle)
	q.next()
	q.deliver(context.Background(), nil)
	if b, wait := q.next(); b != nil || wait != time.Second {
		t.Fatalf("got %v, wait %v", texts(b), wait)
	}
	clock.Advance(time.Second)
	if b, _ := q.next(); len(b) != 1 {
		t.Fatalf("nothing typed after Recheck")
	}
}

func TestRunDeliversAndReports(t *testing.T) {
	ty := &typist{}
	var r receipts
	q := NewQueue(Options{Typist: with{Typist: ty, confirm: func(ctx context.Context, text string) error { return nil }}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go q.Run(ctx)
	q.Add(Item{ID: "m1", Text: "hello", Done: r.done("m1")})
	q.SetState(State{Ready: true, Draft: true})
	q.SetState(idle) // the human cleared the draft
	testutil.Eventually(t, func() error {
		if got := r.get(); strings.Join(got, "|") != "m1 delivered|m1 confirmed" {
			return fmt.Errorf("receipts %q", got)
		}
		return nil
	})
	if got := ty.got(); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("typed %q", got)
	}
}

func TestRunRetriesThenFails(t *testing.T) {
	ty := &typist{fail: 10}
	var r receipts
	q := NewQueue(Options{Typist: ty, Retries: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go q.Run(ctx)
	q.Add(Item{ID: "m1", Text: "hello", Done: r.done("m1")})
	q.SetState(idle)
	testutil.Eventually(t, func() error {
		if got := r.get(); len(got) != 1 || got[0] != "m1 failed typing failed: pty gone" {
			return fmt.Errorf("receipts %q", got)
		}
		return nil
	})
	if ty.fail != 7 {
		t.Errorf("typed %d times, want 3", 10-ty.fail)
	}
}

func TestConfirmFailureIsReported(t *testing.T) {
	var r receipts
	q := NewQueue(Options{Typist: with{Typist: &typist{}, confirm: func(context.Context, string) error {
		return errors.New("input box did not clear")
	}}})
	q.Add(Item{ID: "m1", Text: "x", Done: r.done("m1")})
	q.SetState(idle)
	b, _ := q.next()
	q.deliver(context.Background(), b)
	if got := r.get(); strings.Join(got, "|") != "m1 delivered|m1 failed not confirmed: input box did not clear" {
		t.Fatalf("receipts %q", got)
	}
}

// TestJournalSurvivesRestart: a message typed before a crash and delivered
// again after it is not typed twice.
func TestJournalSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	ty := &typist{}
	q := NewQueue(Options{Typist: ty, Journal: j})
	q.Add(Item{ID: "m1", Text: "first"})
	q.SetState(idle)
	b, _ := q.next()
	q.deliver(context.Background(), b)
	j.Close() // the wrapper crashes here, before the hub got the ack

	j2, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	var r receipts
	q2 := NewQueue(Options{Typist: ty, Journal: j2})
	q2.Add(Item{ID: "m1", Text: "first", Done: r.done("m1")}) // redelivered by the hub
	q2.Add(Item{ID: "m2", Text: "second"})
	q2.SetState(idle)
	b, _ = q2.next()
	if got := texts(b); len(got) != 1 || got[0] != "second" {
		t.Fatalf("after restart the queue offers %q, want only second", got)
	}
	if got := r.get(); len(got) != 1 || !strings.HasPrefix(got[0], "m1 delivered") {
		t.Fatalf("the redelivered message was not reported delivered: %q", got)
	}
	if got := ty.got(); len(got) != 1 {
		t.Fatalf("typed %q", got)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeBatch, "batch": ModeBatch, "wait": ModeWait, "followUp": ModeQueue, "queue": ModeQueue, "steer": ModeSteer} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	// Exact names, as the configuration file takes them: one parser for
	// the file and the flag.
	for _, in := range []string{"later", "Batch", "followup", " steer"} {
		if _, err := ParseMode(in); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", in)) {
			t.Errorf("ParseMode(%q) error %v", in, err)
		}
	}
}

func TestTakeRequeueHanded(t *testing.T) {
	j, err := OpenJournal(filepath.Join(t.TempDir(), "j"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var r receipts
	q := NewQueue(Options{Typist: &typist{}, Journal: j})
	q.Add(Item{ID: "a", Text: "A", Done: r.done("a")})
	q.Add(Item{ID: "b", Text: "B", Done: r.done("b")})
	items := q.Take()
	if len(items) != 2 || q.Pending() != 0 {
		t.Fatalf("took %d, %d left", len(items), q.Pending())
	}
	q.Add(Item{ID: "c", Text: "C"})
	q.Requeue(items[1:]) // b could not be handed over
	q.Handed(items[:1])
	if got := strings.Join(texts(q.Take()), ","); got != "B,C" {
		t.Fatalf("after requeue: %s", got)
	}
	if !j.Seen("a") || j.Seen("b") {
		t.Fatal("journal")
	}
	if got := strings.Join(r.get(), "|"); got != "a delivered|a confirmed" {
		t.Fatalf("receipts %q", got)
	}
}

// TestJournalAtCommit: the batch is journaled when Type commits (right
// after its last write), so a crash while Type still does its bookkeeping
// does not type it again; a Type that fails before it commits leaves
// nothing journaled.
func TestJournalAtCommit(t *testing.T) {
	for _, c := range []struct {
		name   string
		commit bool
		fail   bool
		seen   bool // journaled while Type still runs
	}{
		{"committed then crashed", true, false, true},
		{"failed before commit", false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, err := OpenJournal(filepath.Join(t.TempDir(), "journal"))
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			seen := false
			q := NewQueue(Options{Journal: j, Typist: typeFunc(func(ctx context.Context, in *Injection) error {
				if c.commit {
					in.Commit()
				}
				seen = j.Seen("m1") // the crash would come here
				if c.fail {
					return errors.New("no terminal")
				}
				return nil
			})})
			q.Add(Item{ID: "m1", Text: "first"})
			q.SetState(idle)
			b, _ := q.next()
			q.deliver(context.Background(), b)
			if seen != c.seen {
				t.Errorf("journaled while typing: %v, want %v", seen, c.seen)
			}
			if c.fail && j.Seen("m1") {
				t.Error("a batch never typed was journaled")
			}
		})
	}
}
