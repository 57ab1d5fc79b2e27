package scanner

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/patterns"
)

// TestRunQuietAlarmSleepsUnderSpinner: under the generic profile (a
// shell, a program relay has no cues for) the state turns idle once the
// screen has been quiet for QuietTime, so Run's clock waits for that
// moment, which every frame of a spinner moves later. The frames move the
// clock's alarm with them: while they come, the clock never wakes to find
// the screen not quiet yet (issue 34: that was two wake-ups a second, a
// quarter of a wrapper's CPU). A command printed between two frames still
// fires once, and once the spinner stops the state turns idle.
func TestRunQuietAlarmSleepsUnderSpinner(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the alarm moves without a wake-up only on Linux (a timerfd)")
	}
	cues, _ := CuesFor("generic")
	cues.QuietTime = 150 * time.Millisecond
	ns, err := patterns.NewNamespaces()
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Cols: 80, Rows: 24, Cues: cues, Namespaces: ns})
	events := make(chan Event, 10000)
	s.Subscribe(func(e Event) { events <- e })
	src := make(chanSource)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, src) }()
	t.Cleanup(func() { cancel(); <-done })
	i := 0
	frames := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); i++ {
			src <- []byte(fmt.Sprintf("\r\x1b[2K%s Thinking… (%ds)", []string{"·", "✢", "✳", "✶", "✻", "✽"}[i%6], i/12))
			time.Sleep(5 * time.Millisecond)
		}
	}
	src <- []byte("$ make test\r\n")
	frames(time.Second)
	const cmd = "@relay:Bob please review the migration"
	src <- []byte("\r\x1b[2K" + cmd + "\r\n")
	frames(time.Second)
	s.mu.Lock()
	early, n := s.wokeEarly, i
	s.mu.Unlock()
	// Each early wake-up needs the frames to stall for a whole quiet time
	// first (a loaded machine); without the alarm moving there is one
	// every quiet time, 13 in these 2 s.
	if early > 2 {
		t.Errorf("the clock woke %d times under %d spinner frames before the screen was quiet, want at most 2", early, n)
	}
	stopped := time.Now()
	src <- []byte("\r\x1b[2K$ ")
	var fired []string
	deadline := time.After(10 * time.Second)
	for idle := false; !idle; {
		select {
		case e := <-events:
			switch e.Kind {
			case EventCommand:
				fired = append(fired, "@"+e.Command.NS+":"+e.Command.Target+" "+e.Command.Body)
			case EventState:
				// Not an idle moment of a stall before the spinner stopped.
				idle = !e.State.Busy && e.Time.After(stopped)
			}
		case <-deadline:
			t.Fatalf("never idle after the spinner stopped; screen:\n%s", s.Text())
		}
	}
	if !slices.Equal(fired, []string{cmd}) {
		t.Fatalf("fired %q, want %q once; screen:\n%s", fired, cmd, s.Text())
	}
}
