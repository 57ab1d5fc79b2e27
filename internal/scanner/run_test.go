package scanner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/testutil"
	"github.com/relayhq/relay/internal/wrapper"
)

// lossySource hands out chunks as a wrapper's tap would: when the scanner
// falls behind, the tap drops bytes and says how many.
type lossySource struct {
	chunks  [][]byte
	skipped []int64
	i       int
}

func (l *lossySource) Next(ctx context.Context) ([]byte, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if l.i >= len(l.chunks) {
		return nil, 0, io.EOF
	}
	c, s := l.chunks[l.i], l.skipped[l.i]
	l.i++
	return c, s, nil
}

func TestRunHugeCatWithSkips(t *testing.T) {
	// A `cat` of a huge file in a wrapped shell: the tap dropped bytes
	// three times. The scanner counts them, resets its model, carries on
	// and still reads the commands around the gaps.
	var src lossySource
	line := bytes.Repeat([]byte("0123456789abcdef "), 4)
	for i := range 400 {
		var b bytes.Buffer
		for range 64 {
			b.Write(line)
			b.WriteString("\r\n")
		}
		if i == 10 || i == 390 {
			fmt.Fprintf(&b, "\r\n@relay:Bob chunk %d done\r\n\r\n", i)
		}
		src.chunks = append(src.chunks, b.Bytes())
		var skip int64
		if i%100 == 50 {
			skip = 1 << 20
		}
		src.skipped = append(src.skipped, skip)
	}
	s := New(Options{Cols: 80, Rows: 24})
	// What the source skipped, not flood control: a loaded machine makes
	// the run slow enough to count as a flood (TestFloodRate has that).
	s.floodAt = math.MaxFloat64
	var mu sync.Mutex
	var cmds []string
	var skips int64
	s.Subscribe(func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case EventCommand:
			cmds = append(cmds, e.Command.Body)
		case EventSkipped:
			skips += e.Skipped
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Run(ctx, &src); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if s.Skipped() != 4<<20 || skips != 4<<20 {
		t.Errorf("skipped %d (events %d), want %d", s.Skipped(), skips, 4<<20)
	}
	if fmt.Sprint(cmds) != "[chunk 10 done chunk 390 done]" {
		t.Errorf("commands %q", cmds)
	}
}

// chanSource yields what the test sends; closing it ends the stream.
type chanSource chan []byte

func (c chanSource) Next(ctx context.Context) ([]byte, int64, error) {
	select {
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	case b, ok := <-c:
		if !ok {
			return nil, 0, io.EOF
		}
		return b, 0, nil
	}
}

func TestRunFiresWhenQuietAndStops(t *testing.T) {
	// Real time: the command fires once the screen has been quiet, without
	// more output arriving, and Run ends with its context.
	s := New(Options{Cols: 60, Rows: 10, Cues: Cues{QuietTime: 50 * time.Millisecond}})
	fired := make(chan string, 4)
	s.Subscribe(func(e Event) {
		if e.Kind == EventCommand {
			fired <- e.Command.Body
		}
	})
	src := make(chanSource)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, src) }()
	src <- []byte("@relay:Bob hello\r\n\r\n")
	testutil.Eventually(t, func() error {
		select {
		case b := <-fired:
			if b != "hello" {
				return fmt.Errorf("fired %q", b)
			}
			return nil
		default:
			return errors.New("not fired yet")
		}
	})
	testutil.Eventually(t, func() error {
		if s.State().Busy {
			return errors.New("still busy after the screen went quiet")
		}
		return nil
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	select {
	case b := <-fired:
		t.Fatalf("fired again: %q", b)
	default:
	}
}

func TestRunEOFFlushes(t *testing.T) {
	s := New(Options{})
	var got []string
	s.Subscribe(func(e Event) {
		if e.Kind == EventCommand {
			got = append(got, e.Command.Body)
		}
	})
	src := &lossySource{chunks: [][]byte{[]byte("@relay:Bob open at the end")}, skipped: []int64{0}}
	if err := s.Run(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[open at the end]" {
		t.Fatalf("got %q", got)
	}
}

type failingSource struct{}

func (failingSource) Next(context.Context) ([]byte, int64, error) {
	return nil, 0, errors.New("tap closed")
}

func TestRunSourceError(t *testing.T) {
	err := New(Options{}).Run(context.Background(), failingSource{})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("tap closed")) {
		t.Fatalf("err %v", err)
	}
}

func TestSubscriberMayCallBack(t *testing.T) {
	// Events go out after the scanner's lock is released: a subscriber may
	// call the scanner (as the wrapper does to mark what it types) and
	// unsubscribe itself.
	s := New(Options{Cols: 40, Rows: 6})
	var cancel func()
	got := 0
	cancel = s.Subscribe(func(e Event) {
		_ = s.State()
		s.MarkInjected("reply: " + e.Command.Body)
		if e.Kind == EventCommand {
			got++
			cancel()
		}
	})
	s.Write([]byte("@relay:Bob one\r\n\r\n@relay:Bob two\r\n\r\n"))
	s.Flush()
	s.Write([]byte("@relay:Bob three\r\n\r\n"))
	s.Flush()
	if got != 1 {
		t.Fatalf("subscriber saw %d commands after cancelling at the first, want 1", got)
	}
}

// TestFloodIsSkipped: output far faster than any agent writes (a cat of a
// huge file) is not read byte by byte: it is counted as skipped, and the
// screen is rebuilt from its newest bytes, where a command still fires.
func TestFloodIsSkipped(t *testing.T) {
	tap := wrapper.NewTap(0) // the wrapper's lossy copy of the output
	go func() {
		line := bytes.Repeat([]byte("log: a line of a big file that scrolls by\r\n"), 100)
		for i := 0; i < 1000; i++ { // 4.3 MB as fast as memcpy goes
			tap.Write(line)
		}
		tap.Write([]byte("@relay:Bob the cat is done\r\n$ "))
		tap.Close()
	}()
	s := New(Options{Cols: 80, Rows: 24, Cues: Cues{LineBreaksEnd: true}})
	var fired []string
	s.Subscribe(func(ev Event) {
		if ev.Kind == EventCommand {
			fired = append(fired, ev.Command.Target+" "+ev.Command.Body)
		}
	})
	if err := s.Run(context.Background(), tap); err != nil {
		t.Fatal(err)
	}
	if s.Skipped() == 0 {
		t.Error("a flood of output was read byte by byte")
	}
	if len(fired) != 1 || fired[0] != "Bob the cat is done" {
		t.Errorf("fired %q", fired)
	}
}

// TestFloodRate: the rate rule by itself, on a made-up clock.
func TestFloodRate(t *testing.T) {
	var f flood
	now := time.Unix(0, 0)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	// 64 KiB every 5 ms is 12.8 MB/s: a flood once a window has passed.
	var flooded bool
	for i := 0; i < 30; i++ {
		flooded = f.take(now, chunk, 0)
		now = now.Add(5 * time.Millisecond)
	}
	if f.trim(); !flooded || len(f.tail) != floodTail || f.dropped == 0 {
		t.Fatalf("12.8 MB/s: flooding %v, tail %d, dropped %d", flooded, len(f.tail), f.dropped)
	}
	// 24 KiB every 5 ms is 4.8 MB/s: the cat slowed down (its reader
	// lags, the machine is busy), still far more than any agent writes;
	// reading it in full would read whole windows of it.
	for i := 0; i < 30; i++ {
		flooded = f.take(now, chunk[:24<<10], 0)
		now = now.Add(5 * time.Millisecond)
	}
	if !flooded {
		t.Fatal("a flood slowed to 4.8 MB/s is read in full")
	}
	// 4 KiB every 5 ms is 0.8 MB/s, a busy TUI: read normally again.
	small := chunk[:4<<10]
	for i := 0; i < 30; i++ {
		flooded = f.take(now, small, 0)
		now = now.Add(5 * time.Millisecond)
	}
	if flooded {
		t.Fatal("0.8 MB/s is read as a flood")
	}
}

// TestRunReadsSoonAfterOutput: output that changes the state is read a
// moment after it stops coming, not at the next tick (a quarter of the
// quiet time, here 10 s): relay sees a paste in the input box, or a turn's
// end drawn, in milliseconds.
func TestRunReadsSoonAfterOutput(t *testing.T) {
	s := New(Options{Cols: 60, Rows: 10, Cues: Cues{Prompt: ">", QuietTime: 40 * time.Second}})
	src := make(chanSource)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, src)
	src <- []byte("> ")
	src <- []byte("pasted text")
	deadline := time.Now().Add(5 * time.Second) // half the tick
	for !s.State().Draft {
		if time.Now().After(deadline) {
			t.Fatalf("the input box's text was not read within 5 s (the tick is 10 s): %+v", s.State())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFloodEndsWhenOutputStops: a flood that stops (a `cat` that ended)
// leaves its newest bytes read at once, not held until the program writes
// again: the command the last lines hold fires and the screen shows the
// end of the output.
func TestFloodEndsWhenOutputStops(t *testing.T) {
	s := New(Options{Cols: 60, Rows: 10, Cues: Cues{LineBreaksEnd: true}})
	s.floodAt = 1 // every chunk is a flood once a window has passed
	fired := make(chan string, 1)
	s.Subscribe(func(e Event) {
		if e.Kind == EventCommand {
			fired <- e.Command.Body
		}
	})
	src := make(chanSource)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, src)
	start := time.Now()
	for time.Since(start) < 3*floodWindow {
		src <- []byte("lorem ipsum dolor sit amet\r\n")
		time.Sleep(time.Millisecond)
	}
	src <- []byte("@relay:Bob the cat is done\r\n$ ")
	select {
	case got := <-fired:
		if got != "the cat is done" {
			t.Errorf("fired %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the end of a flood was not read once output stopped; screen:\n%s", s.Text())
	}
}
