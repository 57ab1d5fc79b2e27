package alarm

import (
	"testing"
	"time"
)

func TestAlarm(t *testing.T) {
	a := New()
	defer a.Close()
	t.Run("fires once set", func(t *testing.T) {
		a.Set(time.Millisecond)
		select {
		case <-a.C:
			a.Fired()
		case <-time.After(10 * time.Second):
			t.Fatal("the alarm did not fire")
		}
	})
	t.Run("set again replaces", func(t *testing.T) {
		a.Set(time.Hour)
		a.Set(time.Millisecond) // the hour is gone
		select {
		case <-a.C:
			a.Fired()
		case <-time.After(10 * time.Second):
			t.Fatal("the alarm set again did not fire")
		}
	})
	t.Run("stopped never fires", func(t *testing.T) {
		a.Set(20 * time.Millisecond)
		a.Stop()
		// Something that surely fires after the stopped deadline: if
		// the stopped alarm were still set it would have fired first.
		b := New()
		defer b.Close()
		b.Set(200 * time.Millisecond)
		select {
		case <-a.C:
			t.Fatal("a stopped alarm fired")
		case <-b.C:
		}
	})
}
