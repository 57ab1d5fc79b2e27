package scanner

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/wrapper"
)

// pacedSource is the wrapper's Tap fed by a `cat`, on a made-up clock:
// the cat writes at the rates of plan, one after the other, then end;
// each Next hands out what was written since the last one (its newest
// wrapper.DefaultTapLimit bytes, the rest counted as skipped, as the Tap
// drops them) and takes the reader per of the clock.
type pacedSource struct {
	now    time.Time
	per    time.Duration
	plan   []pace
	text   []byte    // what the cat writes, over and over
	first  []byte    // what it writes first
	end    []byte    // what it writes last, after plan
	t0     time.Time // when the cat started: the first Next
	handed int64     // bytes handed out or skipped
}

// pace is a stretch of a plan: rate bytes a second for d.
type pace struct {
	d    time.Duration
	rate float64
}

func (p *pacedSource) Now() time.Time { return p.now }

func (p *pacedSource) Sleep(d time.Duration) { p.now = p.now.Add(d) }

// written returns how many bytes the cat had written after el, and
// whether it was done.
func (p *pacedSource) written(el time.Duration) (int64, bool) {
	var n float64
	for _, s := range p.plan {
		if el < s.d {
			return int64(n + s.rate*el.Seconds()), false
		}
		n += s.rate * s.d.Seconds()
		el -= s.d
	}
	return int64(n) + int64(len(p.end)), true
}

// total is how many bytes the cat writes.
func (p *pacedSource) total() int64 {
	n, _ := p.written(time.Duration(1 << 62))
	return n
}

// fill copies the cat's bytes from offset from into b; total is all it
// writes.
func (p *pacedSource) fill(b []byte, from, total int64) {
	for i := range b {
		switch at := from + int64(i); {
		case at < int64(len(p.first)):
			b[i] = p.first[at]
		case at >= total-int64(len(p.end)):
			b[i] = p.end[at-(total-int64(len(p.end)))]
		default:
			b[i] = p.text[at%int64(len(p.text))]
		}
	}
}

func (p *pacedSource) Next(ctx context.Context) ([]byte, int64, error) {
	if p.t0.IsZero() {
		p.t0 = p.now
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		p.now = p.now.Add(p.per)
		n, done := p.written(p.now.Sub(p.t0))
		if n > p.handed {
			from := p.handed
			var skipped int64
			if over := n - from - wrapper.DefaultTapLimit; over > 0 {
				skipped, from = over, from+over
			}
			chunk := make([]byte, n-from)
			p.fill(chunk, from, p.total())
			p.handed = n
			return chunk, skipped, nil
		}
		if done {
			return nil, 0, io.EOF
		}
	}
}

// floodRun runs a scanner on src until its end and returns the commands
// fired and how many bytes it read in full (not skipped).
func floodRun(t *testing.T, src *pacedSource) (fired []string, read int64) {
	t.Helper()
	s := New(Options{Cols: 80, Rows: 24, Cues: Cues{LineBreaksEnd: true}})
	s.floodClock = floodClock{Now: src.Now, Sleep: src.Sleep}
	var mu sync.Mutex // events come from Run's clock too
	s.Subscribe(func(ev Event) {
		if ev.Kind == EventCommand {
			mu.Lock()
			fired = append(fired, ev.Command.Body)
			mu.Unlock()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Run(ctx, src); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return fired, src.total() - s.Skipped()
}

// catAt returns a source of a cat of plan: a command first, log lines,
// the cat's last command and the shell's prompt.
func catAt(plan ...pace) *pacedSource {
	return &pacedSource{
		now:   time.Unix(1, 0),
		per:   100 * time.Microsecond, // 4 KB read at 40 MB/s
		plan:  plan,
		first: []byte("@relay:Bob the cat starts\r\n"),
		text:  bytes.Repeat([]byte("log: a line of a big file that scrolls by\r\n"), 3),
		end:   []byte("\r\n@relay:Bob the cat is done\r\n$ "),
	}
}

// TestFloodKnownFromBacklog: a cat at 40 MB/s is known as a flood by what
// piles up in the tap once a window brought 50 KB, not by reading that
// window in full (2 MB at this rate): the scanner reads the cat's first
// bytes and its last screens, and both commands fire, once each.
func TestFloodKnownFromBacklog(t *testing.T) {
	src := catAt(pace{250 * time.Millisecond, 40 << 20})
	fired, read := floodRun(t, src)
	if want := []string{"the cat starts", "the cat is done"}; !slices.Equal(fired, want) {
		t.Errorf("fired %q, want %q", fired, want)
	}
	// The window's first 50 KB, and the flood's tail (64 KB).
	if limit := int64(192 << 10); read > limit {
		t.Errorf("read %d KB of a %d MB flood in full, want at most %d KB", read>>10, src.total()>>20, limit>>10)
	}
}

// TestFloodAfterPauseKnownFromBacklog: a cat that slows to a trickle
// for a while (its reader lags, the machine is loaded) ends the flood
// each time, and the trickle is read; when the cat speeds up again, the
// new flood is known from the backlog again, not from a window read in
// full after each pause.
func TestFloodAfterPauseKnownFromBacklog(t *testing.T) {
	var plan []pace
	for range 4 {
		plan = append(plan, pace{200 * time.Millisecond, 40 << 20}, pace{300 * time.Millisecond, 64 << 10})
	}
	src := catAt(plan...)
	fired, read := floodRun(t, src)
	if len(fired) != 2 || fired[1] != "the cat is done" {
		t.Errorf("fired %q", fired)
	}
	// Four floods' first 50 KB and their tails, and the trickles (19 KB each).
	if limit := int64(4 * 256 << 10); read > limit {
		t.Errorf("read %d KB of a %d MB flood with 4 pauses in full, want at most %d KB", read>>10, src.total()>>20, limit>>10)
	}
}

// TestBurstBelowFloodReadInFull: output that piles up in a held window
// but comes slower than a flood (a big redraw, 6 MB/s for a window) is
// read in full, later: nothing skipped, its commands fire.
func TestBurstBelowFloodReadInFull(t *testing.T) {
	src := catAt(pace{60 * time.Millisecond, 6 << 20})
	src.text = []byte("log: a line\r\n@relay:Bob line\r\n")
	fired, read := floodRun(t, src)
	if read != src.total() {
		t.Errorf("read %d of %d bytes in full", read, src.total())
	}
	if n := src.total() / int64(len(src.text)); int64(len(fired)) < n {
		t.Errorf("fired %d commands of about %d", len(fired), n)
	}
}

// takerSource hands out its chunks in turn, then io.EOF, on a made-up
// clock that each Next moves by per; it records, in order, each Taken and
// each sleep of Run's flood control.
type takerSource struct {
	now    time.Time
	per    time.Duration
	chunks [][]byte
	log    []string
}

func (p *takerSource) Now() time.Time { return p.now }

func (p *takerSource) Sleep(d time.Duration) {
	p.log = append(p.log, "sleep")
	p.now = p.now.Add(d)
}

func (p *takerSource) Taken() { p.log = append(p.log, "taken") }

func (p *takerSource) Next(ctx context.Context) ([]byte, int64, error) {
	p.now = p.now.Add(p.per)
	if len(p.chunks) == 0 {
		return nil, 0, io.EOF
	}
	c := p.chunks[0]
	p.chunks = p.chunks[1:]
	p.log = append(p.log, "next")
	return c, 0, nil
}

// TestFloodWindowTellsTakenFirst: when a window has brought enough output
// that Run leaves the rest of it to pile up unread, a Taker hears that its
// chunk is on the screen before the wait, not a window later: a shell's
// readiness sees the echo of what relay typed and the next injection goes
// (session's watchedSource), whatever the flood control does.
func TestFloodWindowTellsTakenFirst(t *testing.T) {
	big := bytes.Repeat([]byte("output of a big command\r\n"), 3000) // 75 KB: past the window's probe
	src := &takerSource{now: time.Unix(1000, 0), per: time.Millisecond,
		chunks: [][]byte{big, []byte("$ # typed by relay\r\n$ ")}}
	s := New(Options{Cols: 80, Rows: 24, Cues: Cues{LineBreaksEnd: true}})
	s.floodClock = floodClock{Now: src.Now, Sleep: src.Sleep}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Run(ctx, src); err != nil {
		t.Fatal(err)
	}
	want := []string{"next", "taken", "sleep", "next"}
	if !slices.Equal(src.log, want) {
		t.Fatalf("Run's calls %v, want %v: the chunk told taken before the window's wait", src.log, want)
	}
	if !strings.Contains(s.Text(), "# typed by relay") {
		t.Fatalf("the screen does not show what followed the window:\n%s", s.Text())
	}
}
