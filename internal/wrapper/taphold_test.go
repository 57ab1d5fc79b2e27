package wrapper

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// holdReader reads tap on a goroutine of its own, as the scanner does, and
// hands each chunk over.
func holdReader(t *testing.T, tap *Tap) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	out := make(chan string, 100)
	go func() {
		defer close(out)
		for {
			chunk, _, err := tap.Next(ctx)
			if err != nil {
				return
			}
			out <- string(chunk)
		}
	}()
	return out
}

// heldChunk waits for the reader's next chunk, at most 10 s.
func heldChunk(t *testing.T, chunks <-chan string) string {
	t.Helper()
	select {
	case c, ok := <-chunks:
		if !ok {
			t.Fatal("the reader ended")
		}
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no chunk in 10 s")
	}
	return ""
}

// waitParked waits until the tap's reader waits in Next: what is written
// from then on finds it there, as a frame coming between two others does.
func waitParked(t *testing.T, tap *Tap) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tap.mu.Lock()
		parked := tap.parked
		tap.mu.Unlock()
		if parked {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the reader never waited in Next")
		}
		time.Sleep(time.Millisecond)
	}
}

// noZ says frames may wait; a Z (a command, say) may not.
func noZ(p []byte) bool { return !bytes.Contains(p, []byte("Z")) }

func TestTapHoldsFramesForOneRead(t *testing.T) {
	tap := NewTap(0)
	tap.SetHold(noZ, time.Hour)
	defer tap.Close()
	chunks := holdReader(t, tap)
	tap.Write([]byte("Z0"))
	if got := heldChunk(t, chunks); got != "Z0" {
		t.Fatalf("first chunk %q, want Z0", got)
	}
	waitParked(t, tap)
	// Three frames some time apart, then a chunk that may not wait: the
	// reader wakes once, for all four.
	for _, f := range []string{"\r-", "\r\\", "\r|"} {
		tap.Write([]byte(f))
		time.Sleep(20 * time.Millisecond) // frames come apart; the reader has time to take each
	}
	tap.Write([]byte("Z1"))
	if got, want := heldChunk(t, chunks), "\r-\r\\\r|Z1"; got != want {
		t.Fatalf("chunk %q, want %q in one read", got, want)
	}
}

func TestTapHeldOutputComesWhenOutputStops(t *testing.T) {
	tap := NewTap(0)
	tap.SetHold(noZ, 20*time.Millisecond)
	defer tap.Close()
	chunks := holdReader(t, tap)
	waitParked(t, tap)
	tap.Write([]byte("\r-")) // the last frame: nothing comes after it
	if got := heldChunk(t, chunks); got != "\r-" {
		t.Fatalf("chunk %q, want the held frame", got)
	}
	// And again: the alarm is set for each run of held output.
	waitParked(t, tap)
	tap.Write([]byte("\r\\"))
	if got := heldChunk(t, chunks); got != "\r\\" {
		t.Fatalf("chunk %q, want the second held frame", got)
	}
}

func TestTapHoldsNothingAfterAPoke(t *testing.T) {
	tap := NewTap(0)
	tap.SetHold(noZ, time.Hour)
	defer tap.Close()
	chunks := holdReader(t, tap)
	waitParked(t, tap)
	tap.Write([]byte("\r-")) // held: only the alarm, two hours on, or a poke ends it
	tap.Poke()
	if got := heldChunk(t, chunks); got != "\r-" {
		t.Fatalf("chunk %q, want what was held at the poke", got)
	}
	tap.Write([]byte("echo")) // the echo of what was typed: not held
	if got := heldChunk(t, chunks); got != "echo" {
		t.Fatalf("chunk %q, want the echo at once", got)
	}
}

func TestTapHoldsNothingWhileANoteIsDue(t *testing.T) {
	tap := NewTap(0)
	tap.SetHold(noZ, time.Hour)
	defer tap.Close()
	chunks := holdReader(t, tap)
	noted := make(chan struct{})
	tap.NoteAfterLines(1, 100, func() { close(noted) })
	tap.Write([]byte("typed\r\n"))
	if got := heldChunk(t, chunks); got != "typed\r\n" {
		t.Fatalf("chunk %q, want the echo at once", got)
	}
	select {
	case <-noted:
	case <-time.After(10 * time.Second):
		t.Fatal("the note after the echo did not run")
	}
}

func TestTapHeldOutputSurvivesClose(t *testing.T) {
	tap := NewTap(0)
	tap.SetHold(noZ, time.Hour)
	tap.Write([]byte("\r-"))
	tap.Close()
	chunk, _, err := tap.Next(context.Background())
	if err != nil || string(chunk) != "\r-" {
		t.Fatalf("Next after Close: %q, %v; want the held frame", chunk, err)
	}
	if _, _, err := tap.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("then %v, want EOF", err)
	}
}

func TestTapReleaseWaitsForTheReader(t *testing.T) {
	tap := NewTap(0)
	tap.SetHold(noZ, time.Hour)
	defer tap.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	read := make(chan string, 10)
	handled := make(chan string, 10) // what the reader finished with, in order
	go func() {
		for {
			chunk, _, err := tap.Next(ctx)
			if err != nil {
				return
			}
			read <- string(chunk)
			handled <- string(chunk)
		}
	}()
	tap.Write([]byte("Z0"))
	if got := heldChunk(t, read); got != "Z0" {
		t.Fatalf("first chunk %q", got)
	}
	<-handled
	waitParked(t, tap)
	tap.Write([]byte("\r-")) // held: the alarm is two hours away
	if !tap.Release(ctx) {
		t.Fatal("Release found nothing held")
	}
	// Release returned: the reader has taken the held frame and come back
	// for more, so it is in handled already.
	select {
	case got := <-handled:
		if got != "\r-" {
			t.Fatalf("handled %q, want the held frame", got)
		}
	default:
		t.Fatal("Release returned before the reader had read the held frame")
	}
	if tap.Release(ctx) { // nothing held: returns at once
		t.Fatal("Release with nothing held said it released")
	}
}
