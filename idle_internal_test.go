package relay

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/session"
)

// TestOnIdle: OnIdle refuses a schedule that could not run as written,
// with an error naming the field, and hands a good one to the session as
// given (On(Idle) is the default schedule).
func TestOnIdle(t *testing.T) {
	ok := func(context.Context, EventInfo) (Result, error) { return Result{}, nil }
	for _, tc := range []struct {
		name string
		s    IdleSchedule
		says string
	}{
		{"negative after", IdleSchedule{After: -time.Second}, "After is -1s"},
		{"negative every", IdleSchedule{Every: -time.Minute}, "Every is -1m0s"},
		{"negative max", IdleSchedule{Every: time.Minute, Max: -1}, "Max is -1"},
		{"max without every", IdleSchedule{Max: 5}, "Max is 5 without Every"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := New(Options{Home: t.TempDir(), Hub: NoHub})
			err := r.OnIdle(tc.s, ok)
			if !errors.Is(err, ErrBadSchedule) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("OnIdle(%+v) = %v, want ErrBadSchedule saying %q", tc.s, err, tc.says)
			}
			if hs := r.sessionIdle(); len(hs) != 0 {
				t.Errorf("a refused schedule was registered: %+v", hs)
			}
		})
	}
	r, _ := New(Options{Home: t.TempDir(), Hub: NoHub})
	if err := r.OnIdle(IdleSchedule{After: time.Second}, nil); !errors.Is(err, ErrNilHandler) {
		t.Errorf("OnIdle(nil) = %v, want ErrNilHandler", err)
	}
	ran := 0
	count := func(context.Context, EventInfo) (Result, error) { ran++; return Result{}, nil }
	if err := r.OnIdle(IdleSchedule{After: 2 * time.Minute, Every: 10 * time.Minute, Max: 4}, count); err != nil {
		t.Fatal(err)
	}
	if err := r.On(Idle, count); err != nil {
		t.Fatal(err)
	}
	hs := r.sessionIdle()
	if len(hs) != 2 {
		t.Fatalf("%d Idle handlers, want 2", len(hs))
	}
	if h := hs[0]; h.After != 2*time.Minute || h.Every != 10*time.Minute || h.Max != 4 {
		t.Errorf("OnIdle's schedule reached the session as %v/%v/%d", h.After, h.Every, h.Max)
	}
	if h := hs[1]; h.After != 0 || h.Every != 0 || h.Max != 0 {
		t.Errorf("On(Idle)'s schedule is %v/%v/%d, want the defaults", h.After, h.Every, h.Max)
	}
	for _, h := range hs {
		if _, err := h.Handle(context.Background(), session.EventInfo{Event: session.Idle}); err != nil {
			t.Fatal(err)
		}
	}
	if ran != 2 {
		t.Errorf("the handlers ran %d times, want 2", ran)
	}
}
