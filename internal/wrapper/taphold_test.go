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
	tap.Write([]byte("\r-")) // the last frame: nothing comes after it
	if got := heldChunk(t, chunks); got != "\r-" {
		t.Fatalf("chunk %q, want the held frame", got)
	}
	// And again: the alarm is set for each run of held output.
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
