package session

import (
	"slices"
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
