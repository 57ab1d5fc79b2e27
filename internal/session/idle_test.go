package session

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestIdleClock: the schedule of Idle handlers within and across idle
// periods.
func TestIdleClock(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	once := IdleHandler{After: 2 * time.Second}
	every := IdleHandler{After: time.Second, Every: 3 * time.Second, Max: 2}
	type step struct {
		busy, idle, rearm bool    // what happens at the step's time first
		human             float64 // the human's last key (0: never)
		t                 float64
		want              []int // the handlers due
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"once per period, after quiet", []step{
			{idle: true, t: 0}, {t: 1.9}, {t: 2, want: []int{0}}, {t: 10},
		}},
		{"relay's own typing does not re-arm", []step{
			{idle: true, t: 0}, {t: 2, want: []int{0}},
			{busy: true, t: 3}, {idle: true, t: 4}, {t: 30},
		}},
		{"output restarts the quiet time", []step{
			{idle: true, t: 0}, {busy: true, t: 1}, {idle: true, t: 1.5}, {t: 3}, {t: 3.5, want: []int{0}},
		}},
		{"a message is real work", []step{
			{idle: true, t: 0}, {t: 2, want: []int{0}}, {rearm: true, t: 5}, {t: 6.9}, {t: 7, want: []int{0}},
		}},
		{"the human's key is real work", []step{
			{idle: true, t: 0}, {t: 2, want: []int{0}}, {human: 5, t: 6}, {t: 7, want: []int{0}},
		}},
		{"busy: nothing fires", []step{
			{busy: true, t: 0}, {t: 50},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newIdleClock(t0)
			c.setBusy(true, t0)
			var human time.Time
			for _, st := range tc.steps {
				now := at(st.t)
				switch {
				case st.busy:
					c.setBusy(true, now)
				case st.idle:
					c.setBusy(false, now)
				case st.rearm:
					c.rearm(now)
				}
				if st.human > 0 {
					human = at(st.human)
				}
				got, _ := c.due([]IdleHandler{once}, now, human)
				if !slices.Equal(got, st.want) {
					t.Fatalf("at %vs: due %v, want %v", st.t, got, st.want)
				}
			}
		})
	}
	t.Run("after a run, the next is due in every", func(t *testing.T) {
		// Nothing else may wake the caller: a handler whose answer does
		// not make the agent busy still repeats.
		c := newIdleClock(t0)
		c.setBusy(false, t0)
		got, wait := c.due([]IdleHandler{every}, at(1), time.Time{})
		if !slices.Equal(got, []int{0}) || wait != every.Every {
			t.Fatalf("at 1s: due %v, next in %v; want [0], next in %v", got, wait, every.Every)
		}
		got, wait = c.due([]IdleHandler{every}, at(4), time.Time{})
		if !slices.Equal(got, []int{0}) || wait != time.Hour {
			t.Fatalf("at 4s: due %v, next in %v; want [0] and no more (max 2)", got, wait)
		}
	})
	t.Run("every, at most max", func(t *testing.T) {
		c := newIdleClock(t0)
		c.setBusy(false, t0)
		var runs []float64
		for ms := 0; ms <= 20000; ms += 100 {
			now := t0.Add(time.Duration(ms) * time.Millisecond)
			if got, _ := c.due([]IdleHandler{every}, now, time.Time{}); len(got) > 0 {
				runs = append(runs, float64(ms)/1000)
				// The answer typed in makes the agent busy a moment.
				c.setBusy(true, now)
				c.setBusy(false, now.Add(200*time.Millisecond))
			}
		}
		if !slices.Equal(runs, []float64{1, 4}) {
			t.Fatalf("ran at %v, want [1 4] (after 1s, every 3s, max 2)", runs)
		}
	})
}

// TestIdleScheduleRuns: in a running session, an Idle handler with a short
// After and Every runs Max times in an idle period, and no more, even
// though its answer is typed in. The proof of "no more" is a positive
// signal: a second handler on the same clock with a larger Max runs its
// later runs after the first one's would have been due, on the same jobs
// queue, so they are seen only once the first one had every chance.
func TestIdleScheduleRuns(t *testing.T) {
	const every = 30 * time.Millisecond
	var mu sync.Mutex
	runs := map[string]int{}
	seen := make(chan struct{}, 100)
	handler := func(name string) EventFunc {
		return func(context.Context, EventInfo) (Result, error) {
			mu.Lock()
			runs[name]++
			mu.Unlock()
			seen <- struct{}{}
			return Result{Inject: name + " reminder"}, nil
		}
	}
	r := startRig(t, Config{Idle: func() []IdleHandler {
		return []IdleHandler{
			{After: every, Every: every, Max: 3, Handle: handler("three")},
			{After: every, Every: every, Max: 6, Handle: handler("sentinel")},
		}
	}})
	r.screenBusy(false)
	deadline := time.After(20 * time.Second)
	for {
		mu.Lock()
		done := runs["sentinel"] == 6
		mu.Unlock()
		if done {
			break
		}
		select {
		case <-seen:
		case <-deadline:
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("ran %v; the sentinel never reached 6", runs)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if runs["three"] != 3 {
		t.Errorf("the Max 3 handler ran %d times in one idle period, want 3 (all: %v)", runs["three"], runs)
	}
}
