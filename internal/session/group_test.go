package session

import (
	"sync/atomic"
	"testing"
	"time"
)

type fakeTerminal struct{ restored atomic.Int32 }

func (f *fakeTerminal) RestoreTerminal() { f.restored.Add(1) }

// TestTermGroupRestoresOnPanic panics in a function guarded as the
// group's goroutines are: before the terminal is attached the panic just
// goes on; after, the terminal is restored first, and the panic still
// goes on (the program crashes as it would, its terminal usable).
func TestTermGroupRestoresOnPanic(t *testing.T) {
	g := &termGroup{}
	var term fakeTerminal
	panics := func() (recovered any) {
		defer func() { recovered = recover() }()
		func() {
			defer g.restoreOnPanic()
			panic("boom")
		}()
		return nil
	}
	if p := panics(); p != "boom" {
		t.Fatalf("before attach: the panic became %v", p)
	}
	if n := term.restored.Load(); n != 0 {
		t.Fatalf("restored %d times before a terminal was attached", n)
	}
	g.attach(&term)
	if p := panics(); p != "boom" {
		t.Fatalf("after attach: the panic became %v", p)
	}
	if n := term.restored.Load(); n != 1 {
		t.Fatalf("restored %d times, want 1", n)
	}
}

// TestTermGroupRunsEveryGoroutine starts goroutines through the group and
// sees each run.
func TestTermGroupRunsEveryGoroutine(t *testing.T) {
	g := &termGroup{}
	done := make(chan int, 8)
	for i := range 8 {
		g.Go(func() { done <- i })
	}
	seen := map[int]bool{}
	deadline := time.After(10 * time.Second)
	for range 8 {
		select {
		case i := <-done:
			seen[i] = true
		case <-deadline:
			t.Fatalf("only %d goroutines ran", len(seen))
		}
	}
	if len(seen) != 8 {
		t.Fatalf("ran %d distinct goroutines, want 8", len(seen))
	}
}
