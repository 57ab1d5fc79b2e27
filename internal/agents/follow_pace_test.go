package agents

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/patterns"
)

// countedFile is a ReplyFile that gives nothing and counts its reads.
type countedFile struct{ reads atomic.Int64 }

func (f *countedFile) Read(bool) ([]string, []string, error) {
	f.reads.Add(1)
	return nil, nil, nil
}

// quietSink is a FileSink for a follower whose file gives nothing.
type quietSink struct{}

func (quietSink) Texts([]string)              {}
func (quietSink) Prompted([]string)           {}
func (quietSink) Commands([]patterns.Command) {}
func (quietSink) Idle() bool                  { return false }
func (quietSink) Pid() int                    { return 1 }

// runFollower runs f until the test ends.
func runFollower(t *testing.T, f *Follower) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.follow(ctx, quietSink{})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// waitReads waits until file was read at least n times, at most 10 s.
func waitReads(t *testing.T, file *countedFile, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for file.reads.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d reads, want %d", file.reads.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFollowerSlowsWhileTheFileGivesNothing: a record that gives nothing
// (a CLI thinking, or idle) is read less and less often, down to once a
// second, not ten times a second (issue 34).
func TestFollowerSlowsWhileTheFileGivesNothing(t *testing.T) {
	file := &countedFile{}
	f := NewFollower("the test's file", func(int) (ReplyFile, error) { return file, nil }, discardLog())
	runFollower(t, f)
	waitReads(t, file, 1)
	start := time.Now()
	time.Sleep(1500 * time.Millisecond) // the span the reads are counted over
	// At 100 ms apart that would be 15 reads; doubling from 100 ms, 4. A
	// loaded machine reads fewer, never more.
	if n, took := file.reads.Load(), time.Since(start); n > 6 {
		t.Fatalf("%d reads in %v of a file that gives nothing, want at most 6", n, took)
	}
}

// TestFollowerReadsAtOnceWhenToldWhy: a reason to look (the turn's end, a
// command on the screen, a prompt relay typed) reads the record at once,
// however slow the pace had become.
func TestFollowerReadsAtOnceWhenToldWhy(t *testing.T) {
	file := &countedFile{}
	f := NewFollower("the test's file", func(int) (ReplyFile, error) { return file, nil }, discardLog())
	f.fast, f.slow = time.Hour, time.Hour // no read comes by itself
	runFollower(t, f)
	f.Idle() // finds the file
	waitReads(t, file, 1)
	for i, why := range []func(){
		f.Idle,
		func() { f.Screen(patterns.Command{NS: "relay", Target: "Bob", Body: "hi"}) },
		f.Hurry,
	} {
		why()
		waitReads(t, file, int64(i+2))
	}
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
