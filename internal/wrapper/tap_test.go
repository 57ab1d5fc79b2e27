package wrapper

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestTapPassesEverythingWhenKeptUp(t *testing.T) {
	tap := NewTap(1 << 10)
	var got []byte
	for i := 0; i < 100; i++ {
		tap.Write([]byte("hello "))
		chunk, skipped, err := tap.Next(context.Background())
		if err != nil || skipped != 0 {
			t.Fatalf("Next: %v, skipped %d", err, skipped)
		}
		got = append(got, chunk...)
	}
	if want := bytes.Repeat([]byte("hello "), 100); !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want %d", len(got), len(want))
	}
}

func TestTapSkipsAheadWhenBehind(t *testing.T) {
	tap := NewTap(10)
	tap.Write([]byte("0123456"))
	tap.Write([]byte("789ab")) // over the limit: the first write is dropped
	chunk, skipped, err := tap.Next(context.Background())
	if err != nil || string(chunk) != "789ab" || skipped != 7 {
		t.Fatalf("got %q skipped %d err %v; want 789ab, 7", chunk, skipped, err)
	}
	long := []byte("a write longer than the limit")
	tap.Write(long)
	chunk, skipped, _ = tap.Next(context.Background())
	if string(chunk) != " the limit" {
		t.Fatalf("chunk %q is not the newest 10 bytes", chunk)
	}
	if skipped != int64(len("a write longer than the limit")-10) {
		t.Fatalf("skipped %d", skipped)
	}
	if tap.Skipped() != 7+skipped {
		t.Fatalf("total skipped %d", tap.Skipped())
	}
}

func TestTapWriteNeverBlocks(t *testing.T) {
	tap := NewTap(1 << 10)
	done := make(chan struct{})
	go func() {
		for i := 0; i < 100000; i++ { // nobody reads
			tap.Write([]byte("0123456789abcdef"))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Write blocked without a reader")
	}
}

func TestTapClose(t *testing.T) {
	tap := NewTap(0)
	tap.Write([]byte("last words"))
	tap.Close()
	tap.Write([]byte("after close"))
	chunk, _, err := tap.Next(context.Background())
	if err != nil || string(chunk) != "last words" {
		t.Fatalf("got %q, %v", chunk, err)
	}
	if _, _, err := tap.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("want io.EOF, got %v", err)
	}
}

func TestTapNextHonoursContext(t *testing.T) {
	tap := NewTap(0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := tap.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

func BenchmarkTapWrite(b *testing.B) {
	tap := NewTap(0)
	p := bytes.Repeat([]byte("x"), 32<<10)
	b.SetBytes(int64(len(p)))
	go func() {
		for {
			if _, _, err := tap.Next(context.Background()); err != nil {
				return
			}
		}
	}()
	for b.Loop() {
		tap.Write(p)
	}
	tap.Close()
}

// TestTapNoteInOrder: a note runs after the reader took every byte written
// before it and before any byte written after, also across a skip.
func TestTapNoteInOrder(t *testing.T) {
	tap := NewTap(16)
	var seen []string
	tap.Write([]byte("abc"))
	tap.Note(func() { seen = append(seen, "N1") })
	tap.Write([]byte("def"))
	tap.Note(func() { seen = append(seen, "N2") })
	tap.Close()
	for {
		chunk, skipped, err := tap.Next(context.Background())
		if err != nil {
			break
		}
		if skipped > 0 {
			seen = append(seen, fmt.Sprintf("skip%d", skipped))
		}
		if len(chunk) > 0 {
			seen = append(seen, string(chunk))
		}
	}
	if got := strings.Join(seen, "|"); got != "abc|N1|def|N2" {
		t.Errorf("read %q, want abc|N1|def|N2", got)
	}

	// A note whose bytes before it were dropped runs after the skip,
	// before the newest bytes.
	tap = NewTap(4)
	seen = nil
	tap.Write([]byte("abc"))
	tap.Note(func() { seen = append(seen, "N") })
	tap.Write([]byte("wxyz"))
	tap.Close()
	for {
		chunk, skipped, err := tap.Next(context.Background())
		if err != nil {
			break
		}
		if skipped > 0 {
			seen = append(seen, fmt.Sprintf("skip%d", skipped))
		}
		if len(chunk) > 0 {
			seen = append(seen, string(chunk))
		}
	}
	if got := strings.Join(seen, "|"); got != "skip3|N|wxyz" {
		t.Errorf("read %q, want skip3|N|wxyz", got)
	}
}

// TestTapNoteAfterLines: a note due after line feeds not written yet runs
// right after the one that completes it (or its byte budget), before the
// bytes written after it.
func TestTapNoteAfterLines(t *testing.T) {
	for _, c := range []struct {
		name          string
		lines, budget int
		writes        []string
		before, after string // what the reader takes before and after the note
	}{
		{"one line", 1, 100, []string{"echo x", "\r\nout\r\n"}, "echo x\r\n", "out\r\n"},
		{"two lines", 2, 100, []string{"a\nb", "\nc\n"}, "a\nb\n", "c\n"},
		{"the budget first", 5, 4, []string{"abcdef"}, "abcd", "ef"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tap := NewTap(0)
			var got [2]strings.Builder
			noted := 0
			tap.NoteAfterLines(c.lines, c.budget, func() { noted++ })
			for _, w := range c.writes {
				tap.Write([]byte(w))
			}
			tap.Close()
			for {
				chunk, _, err := tap.Next(context.Background())
				if err != nil {
					break
				}
				got[min(noted, 1)].Write(chunk)
			}
			if noted != 1 || got[0].String() != c.before || got[1].String() != c.after {
				t.Errorf("noted %d times, after %q and before %q; want once, after %q and before %q",
					noted, got[0].String(), got[1].String(), c.before, c.after)
			}
		})
	}
}

// TestTapGrowsToItsLimitAtOnce: a reader left behind in a flood (the
// scanner lets it pile up) costs the tap one new buffer, not a new one
// for each quarter it grows by, whose pages the kernel faults in and
// clears each time.
func TestTapGrowsToItsLimitAtOnce(t *testing.T) {
	piece := bytes.Repeat([]byte("x"), 4<<10)
	allocs := testing.AllocsPerRun(5, func() {
		tap := NewTap(0)
		for range DefaultTapLimit / len(piece) {
			tap.Write(piece)
		}
		if chunk, skipped, _ := tap.Next(context.Background()); len(chunk) != DefaultTapLimit || skipped != 0 {
			t.Fatalf("got %d bytes, skipped %d", len(chunk), skipped)
		}
	})
	// The tap, its signal, its pending bytes up to tapGrowAll (a few
	// doublings) and once to the limit.
	if allocs > 14 {
		t.Errorf("%v allocations to hold a megabyte in 4 KB writes", allocs)
	}
}
