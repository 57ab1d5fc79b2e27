package delivery

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestCopyIsTypedOnce: a message the hub delivers again is typed once,
// wherever the first copy is: waiting, being typed, typed, taken for a
// hand-over. Every copy gets the statuses, so that every delivery is
// acknowledged.
func TestCopyIsTypedOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		// run adds the copy "m1" (Done: r.done("copy")) at the point the
		// case is about, and drives the queue until m1 was typed.
		run         func(t *testing.T, q *Queue, ty *typist, r *receipts)
		confirm     bool
		wantTyped   string
		wantReceipt string
	}{
		{
			name: "copy while the first waits",
			run: func(t *testing.T, q *Queue, ty *typist, r *receipts) {
				q.Add(Item{ID: "m1", Text: "hello", Done: r.done("copy")})
				if q.Pending() != 1 {
					t.Errorf("%d pending, want 1", q.Pending())
				}
				deliverNext(q)
			},
			confirm:     true,
			wantTyped:   "hello",
			wantReceipt: "first delivered|copy delivered|first confirmed|copy confirmed",
		},
		{
			name: "copy while the first is typed",
			run: func(t *testing.T, q *Queue, ty *typist, r *receipts) {
				ty.during = func() { q.Add(Item{ID: "m1", Text: "hello", Done: r.done("copy")}) }
				deliverNext(q)
			},
			confirm:     true,
			wantTyped:   "hello",
			wantReceipt: "first delivered|copy delivered|first confirmed|copy confirmed",
		},
		{
			name: "copy after the first was typed",
			run: func(t *testing.T, q *Queue, ty *typist, r *receipts) {
				deliverNext(q)
				q.Add(Item{ID: "m1", Text: "hello", Done: r.done("copy")})
				q.SetState(State{Ready: true, Busy: true})
				q.SetState(idle)
				deliverNext(q)
			},
			wantTyped:   "hello",
			wantReceipt: "first delivered|copy delivered already delivered",
		},
		{
			name: "copy while the first fails",
			run: func(t *testing.T, q *Queue, ty *typist, r *receipts) {
				ty.fail = 100
				ty.during = func() { q.Add(Item{ID: "m1", Text: "hello", Done: r.done("copy")}) }
				deliverNext(q)
			},
			wantTyped:   "",
			wantReceipt: "first failed typing failed: pty gone|copy failed typing failed: pty gone",
		},
		{
			name: "copy during a hand-over that fails, then typed",
			run: func(t *testing.T, q *Queue, ty *typist, r *receipts) {
				items := q.Take()
				q.Add(Item{ID: "m1", Text: "hello", Done: r.done("copy")})
				if q.Pending() != 0 {
					t.Error("the copy was queued beside the taken item")
				}
				q.Requeue(items)
				deliverNext(q)
			},
			wantTyped:   "hello",
			wantReceipt: "first delivered|copy delivered",
		},
		{
			name: "copy during a hand-over that works",
			run: func(t *testing.T, q *Queue, ty *typist, r *receipts) {
				items := q.Take()
				q.Add(Item{ID: "m1", Text: "hello", Done: r.done("copy")})
				q.Handed(items)
				q.Add(Item{ID: "m1", Text: "hello", Done: r.done("late")})
			},
			wantTyped:   "",
			wantReceipt: "first delivered|copy delivered|first confirmed|copy confirmed|late delivered already delivered",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ty := &typist{}
			var r receipts
			o := Options{Clock: newFakeClock(), Typist: ty}
			if tc.confirm {
				o.Typist = with{Typist: ty, confirm: func(context.Context, string) error { return nil }}
			}
			q := NewQueue(o)
			q.SetState(idle)
			q.Add(Item{ID: "m1", Text: "hello", Done: r.done("first")})
			tc.run(t, q, ty, &r)
			if got := strings.Join(ty.got(), "|"); got != tc.wantTyped {
				t.Errorf("typed %q, want %q", got, tc.wantTyped)
			}
			if got := strings.Join(r.get(), "|"); got != tc.wantReceipt {
				t.Errorf("receipts\n got %s\nwant %s", got, tc.wantReceipt)
			}
			if q.Pending() != 0 {
				t.Errorf("%d items still wait", q.Pending())
			}
		})
	}
}

// deliverNext types what the queue offers now, if anything.
func deliverNext(q *Queue) {
	if b, _ := q.next(); b != nil {
		q.deliver(context.Background(), b)
	}
}

// TestStallTypesEachMessageOnce replays issue 20's stall: 100 messages wait
// for a shell that takes one per half second; the wrapper stops for 15 s
// after the 20th, and the hub delivers every unacknowledged message again
// each time its 10 s ack wait runs out. Each message is typed once, and
// every copy is acknowledged. (Before the queue knew what waited in it, the
// copies were typed a second time.) In batch mode the cap holds three
// messages an injection, so that the stall still finds most of them
// waiting.
func TestStallTypesEachMessageOnce(t *testing.T) {
	const n, ackWait = 100, 10 * time.Second
	for _, tc := range []struct {
		mode    Mode
		journal bool
	}{{ModeWait, false}, {ModeWait, true}, {ModeBatch, false}, {ModeBatch, true}} {
		journal := tc.journal
		t.Run(fmt.Sprintf("%s/journal=%v", tc.mode, journal), func(t *testing.T) {
			clock := newFakeClock()
			ty := &typist{}
			// "message m000" is 12 bytes: 3 of them and 2 separators are 40.
			o := Options{Mode: tc.mode, MaxInjection: 40, Clock: clock, Typist: ty, Recheck: 500 * time.Millisecond}
			if journal {
				j, err := OpenJournal(filepath.Join(t.TempDir(), "journal"))
				if err != nil {
					t.Fatal(err)
				}
				defer j.Close()
				o.Journal = j
			}
			q := NewQueue(o)
			q.SetState(idle)

			// The hub: each delivery of an unacknowledged message is
			// delivered again ackWait later.
			acked := map[string]int{}
			copies := 0
			deliveredAt := map[string]time.Time{}
			deliverFromHub := func(id string) {
				copies++
				deliveredAt[id] = clock.Now()
				q.Add(Item{ID: id, Text: "message " + id, Done: func(st Status, _ string) {
					if st == StatusDelivered {
						acked[id]++
					}
				}})
			}
			for i := range n {
				deliverFromHub(fmt.Sprintf("m%03d", i))
			}
			hubTick := func() {
				for i := range n {
					id := fmt.Sprintf("m%03d", i)
					if acked[id] == 0 && clock.Now().Sub(deliveredAt[id]) >= ackWait {
						deliverFromHub(id)
					}
				}
			}
			typedMessages := func() []string {
				var all []string
				for _, s := range ty.got() {
					all = append(all, strings.Split(s, DefaultJoin)...)
				}
				return all
			}
			var stallFrom time.Time
			for range 1500 { // 150 s
				if len(typedMessages()) >= 20 && stallFrom.IsZero() {
					stallFrom = clock.Now()
				}
				if stallFrom.IsZero() || clock.Now().Sub(stallFrom) >= 15*time.Second {
					deliverNext(q)
				}
				clock.Advance(100 * time.Millisecond)
				hubTick()
			}
			typed := map[string]int{}
			for _, s := range typedMessages() {
				typed[s]++
			}
			var twice []string
			for s, k := range typed {
				if k > 1 {
					twice = append(twice, s)
				}
			}
			sort.Strings(twice)
			if len(twice) > 5 {
				twice = twice[:5]
			}
			if len(twice) > 0 || len(typed) != n {
				t.Fatalf("%d distinct messages typed (want %d), %d typed more than once, among them %q", len(typed), n, len(twice), twice)
			}
			if copies <= n {
				t.Fatalf("the hub delivered nothing again (%d deliveries): the test does not stall", copies)
			}
			total := 0
			for _, k := range acked {
				total += k
			}
			if len(acked) != n || total != copies {
				t.Fatalf("%d messages acknowledged, %d acks for %d deliveries", len(acked), total, copies)
			}
			t.Logf("%d messages, %d deliveries by the hub, typed once each", n, copies)
		})
	}
}
