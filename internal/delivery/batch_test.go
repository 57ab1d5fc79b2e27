package delivery

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// labelled returns n items as the session formats them: each labelled with
// its sender and id, of the given size (at least the label).
func labelled(n, size int, r *receipts) []Item {
	items := make([]Item, n)
	for i := range items {
		id := fmt.Sprintf("m%03d", i)
		text := fmt.Sprintf("[relay] Message from agent Bob (id %s):", id)
		if pad := size - len(text) - 1; pad > 0 {
			text += " " + strings.Repeat(string(rune('a'+i%26)), pad)
		}
		items[i] = Item{ID: id, Text: text}
		if r != nil {
			items[i].Done = r.done(id)
		}
	}
	return items
}

// TestBurstIsOneInjection (issue 22): a burst of 20 to an idle agent is
// typed as one injection, every message in order, each with its receipt;
// the confirmation sees the joined text (its first line is the first
// message's label). A burst added one by one while the agent works goes in
// one injection too, at its next idle moment.
func TestBurstIsOneInjection(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		add  func(q *Queue, items []Item)
		sep  string
	}{
		{
			name: "model CLI, the inbox adds a pulled batch at once",
			add:  func(q *Queue, items []Item) { q.SetState(idle); q.AddAll(items) },
			sep:  "\n\n",
		},
		{
			name: "plain shell, one line each",
			o:    Options{Join: "\r", MaxInjection: MaxShellLine},
			add:  func(q *Queue, items []Item) { q.SetState(idle); q.AddAll(items) },
			sep:  "\r",
		},
		{
			name: "added one by one during a turn",
			add: func(q *Queue, items []Item) {
				q.SetState(State{Ready: true, Busy: true})
				for _, it := range items {
					q.Add(it)
				}
				q.SetState(idle)
			},
			sep: "\n\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ty := &typist{}
			var r receipts
			var mu sync.Mutex
			var confirmed []string
			o := tc.o
			o.Clock = newFakeClock()
			o.Typist = with{Typist: ty, confirm: func(_ context.Context, text string) error {
				mu.Lock()
				defer mu.Unlock()
				confirmed = append(confirmed, text)
				return nil
			}}
			q := NewQueue(o)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan struct{})
			go func() { defer close(done); _ = q.Run(ctx) }()
			defer func() { cancel(); <-done }()

			items := labelled(20, 120, &r)
			tc.add(q, items)
			testutil.Eventually(t, func() error {
				if got := len(r.get()); got != 40 {
					return fmt.Errorf("%d receipts of 40", got)
				}
				return nil
			})
			want := join(items, tc.sep)
			if got := ty.got(); len(got) != 1 || got[0] != want {
				t.Fatalf("typed %d injections, want one:\n%q\nwant\n%q", len(got), got, want)
			}
			mu.Lock()
			if len(confirmed) != 1 || confirmed[0] != want {
				t.Errorf("confirm saw %q", confirmed)
			}
			mu.Unlock()
			got := r.get()
			for i, it := range items {
				if got[i] != it.ID+" delivered" || got[20+i] != it.ID+" confirmed" {
					t.Fatalf("receipts of %s: %q, %q", it.ID, got[i], got[20+i])
				}
			}
		})
	}
}

// TestBurstOverCapIsSplit (issue 22): a burst larger than the cap goes in
// over several idle moments, in order, every message once, none lost; each
// injection fits the cap except a single message longer than it, which goes
// alone and whole. Queue mode (which joined everything, so that a burst
// into a shell became one line longer than the terminal takes) obeys the
// cap too; wait mode types one message per idle moment; after each
// injection nothing more is typed until the agent shows a new idle moment.
func TestBurstOverCapIsSplit(t *testing.T) {
	const limit = 4000
	for _, tc := range []struct {
		mode    Mode
		maxEach int // most messages one injection may hold; 0: no bound
	}{
		{mode: ModeBatch},
		{mode: ModeQueue},
		{mode: ModeSteer},
		{mode: ModeWait, maxEach: 1},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			ty := &typist{}
			var r receipts
			q := NewQueue(Options{Mode: tc.mode, Join: "\r", MaxInjection: limit, Clock: newFakeClock(), Typist: ty})
			items := labelled(50, 300, &r)
			items = append(items[:25:25], append([]Item{{ID: "big", Text: strings.Repeat("B", limit+500), Done: r.done("big")}}, items[25:]...)...)
			q.AddAll(items)
			q.SetState(idle)
			for range 200 {
				b, _ := q.next()
				if b == nil {
					break
				}
				q.deliver(context.Background(), b)
				if b2, _ := q.next(); b2 != nil {
					t.Fatalf("typed %d more before the agent showed a new idle moment", len(b2))
				}
				q.SetState(State{Ready: true, Busy: true})
				q.SetState(idle)
			}
			injections := ty.got()
			var typed []string
			for _, text := range injections {
				parts := strings.Split(text, "\r")
				if len(text) > limit && len(parts) > 1 {
					t.Errorf("an injection of %d messages is %d bytes, over the cap of %d", len(parts), len(text), limit)
				}
				if tc.maxEach > 0 && len(parts) > tc.maxEach {
					t.Errorf("an injection holds %d messages, want at most %d", len(parts), tc.maxEach)
				}
				typed = append(typed, parts...)
			}
			if got, want := strings.Join(typed, "\n"), join(items, "\n"); got != want {
				t.Fatalf("typed (in %d injections) is not every message once in order", len(injections))
			}
			if tc.maxEach == 0 && len(injections) >= len(items)/2 {
				t.Errorf("%d injections for %d messages: not batched", len(injections), len(items))
			}
			if got := len(r.get()); got != len(items) {
				t.Errorf("%d receipts for %d messages", got, len(items))
			}
			if q.Pending() != 0 {
				t.Errorf("%d still wait", q.Pending())
			}
			t.Logf("%d messages in %d injections", len(items), len(injections))
		})
	}
}

// TestBatchedCopiesTypedOnce: the hub's copies of batched messages are
// merged wherever the first copy is: waiting in the queue, in the same pulled
// batch, being typed in a joined injection, or typed already.
func TestBatchedCopiesTypedOnce(t *testing.T) {
	ty := &typist{}
	var r receipts
	q := NewQueue(Options{Clock: newFakeClock(), Typist: with{Typist: ty, confirm: func(context.Context, string) error { return nil }}})
	item := func(id, who string) Item { return Item{ID: id, Text: "text " + id, Done: r.done(who)} }
	q.AddAll([]Item{item("a", "a"), item("b", "b"), item("a", "a-same-pull")})
	q.Add(item("b", "b-waiting"))
	ty.during = func() {
		q.AddAll([]Item{item("a", "a-in-flight"), item("c", "c")})
	}
	q.SetState(idle)
	deliverNext(q)
	q.Add(item("b", "b-typed"))
	q.SetState(State{Ready: true, Busy: true})
	q.SetState(idle)
	deliverNext(q)

	if got, want := strings.Join(ty.got(), "|"), "text a\n\ntext b|text c"; got != want {
		t.Fatalf("typed %q, want %q", got, want)
	}
	want := []string{
		"a delivered", "a-same-pull delivered", "b delivered", "b-waiting delivered", "a-in-flight delivered",
		"a confirmed", "a-same-pull confirmed", "b confirmed", "b-waiting confirmed", "a-in-flight confirmed",
		"b-typed delivered already delivered",
		"c delivered", "c confirmed",
	}
	if got := r.get(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("receipts\n got %q\nwant %q", got, want)
	}
}

// TestBatchIsTheDefault: with no mode configured the queue batches, joins
// with a blank line and caps an injection at DefaultMaxInjection.
func TestBatchIsTheDefault(t *testing.T) {
	if DefaultMode != ModeBatch {
		t.Fatalf("DefaultMode = %q", DefaultMode)
	}
	if m, err := ParseMode(""); err != nil || m != ModeBatch {
		t.Fatalf("ParseMode(\"\") = %q, %v", m, err)
	}
	q := NewQueue(Options{Clock: newFakeClock(), Typist: &typist{}})
	if q.o.Mode != ModeBatch || q.o.Join != "\n\n" || q.o.MaxInjection != DefaultMaxInjection {
		t.Fatalf("defaults: mode %q, join %q, cap %d", q.o.Mode, q.o.Join, q.o.MaxInjection)
	}
	// The cap is reached exactly, not exceeded: four full-size messages fit.
	items := []Item{}
	for i := range 5 {
		items = append(items, Item{Text: strings.Repeat(fmt.Sprint(i), (DefaultMaxInjection-3*len(DefaultJoin))/4)})
	}
	q.AddAll(items)
	q.SetState(idle)
	if b, _ := q.next(); len(b) != 4 {
		t.Fatalf("%d of 5 quarter-cap messages in the first injection, want 4", len(b))
	}
}

// TestFit: where an injection is cut.
func TestFit(t *testing.T) {
	mk := func(sizes ...int) []Item {
		var items []Item
		for _, n := range sizes {
			items = append(items, Item{Text: strings.Repeat("x", n)})
		}
		return items
	}
	for _, tc := range []struct {
		name  string
		sizes []int
		limit int
		want  int
	}{
		{"nothing", nil, 10, 0},
		{"all fit", []int{3, 3, 2}, 10, 3}, // 3+1+3+1+2 = 10
		{"third is one byte over", []int{3, 3, 3}, 10, 2},
		{"first alone over the cap", []int{20, 1}, 10, 1},
		{"no cap", []int{20, 20, 20}, -1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fit(mk(tc.sizes...), 1, tc.limit); got != tc.want {
				t.Errorf("fit = %d, want %d", got, tc.want)
			}
		})
	}
}
