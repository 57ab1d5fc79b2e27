package scanner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/patterns"
)

// recording is one NAME.raw with its NAME.json.
type recording struct {
	name, raw string
	profile   string
	Cols      int                                `json:"cols"`
	Rows      int                                `json:"rows"`
	Must      []mustCmd                          `json:"must"`
	MustNot   []struct{ NS, Target string }      `json:"must_not"`
	Either    []struct{ NS, Target, Why string } `json:"either"`
}

type mustCmd struct{ NS, Target, Body string }

// recordings loads every recording folder under testdata/recordings, so
// that new folders are picked up without a code change. A folder named
// after a CLI (claude-code-*, codex-*, gemini-*) uses that profile's cues;
// the other CLIs' folders are internal/agents/registry's to test.
func recordings(t testing.TB) []*recording {
	t.Helper()
	files, _ := filepath.Glob("../../testdata/recordings/*/*.json")
	if len(files) == 0 {
		t.Fatal("no recordings under ../../testdata/recordings")
	}
	var out []*recording
	for _, f := range files {
		raw := strings.TrimSuffix(f, ".json") + ".raw"
		if _, err := os.Stat(raw); err != nil {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := &recording{name: filepath.Base(filepath.Dir(f)) + "/" + strings.TrimSuffix(filepath.Base(f), ".json"), raw: raw}
		if err := json.Unmarshal(data, r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		dir := filepath.Base(filepath.Dir(f))
		for _, p := range []string{"claude", "codex", "gemini"} {
			if strings.HasPrefix(dir, p) {
				r.profile = p
			}
		}
		if r.profile == "" {
			// A CLI whose cues this package's tests do not copy (pi,
			// Qwen Code…): internal/agents/registry's TestRecordings reads it with
			// its profile's own cues.
			continue
		}
		out = append(out, r)
	}
	return out
}

func (r *recording) namespaces(t testing.TB) *patterns.Namespaces {
	ns, _ := patterns.NewNamespaces()
	for _, m := range r.Must {
		if err := ns.Add(m.NS); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

// TestRecordings replays every recording twice: in one write, and in small
// pieces with time passing between them (as the bytes arrived), with the
// scanner reading the intermediate frames. Both must find each must command
// exactly once with its exact words, and none of must_not; of the either
// cases, code (known on screen by its colour) must not fire.
func TestRecordings(t *testing.T) {
	for _, r := range recordings(t) {
		t.Run(r.name+"/replay", func(t *testing.T) {
			f, err := os.Open(r.raw)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var got []patterns.Command
			cues, _ := CuesFor(r.profile)
			err = Replay(context.Background(), f, ReplayOptions{Name: r.raw, Namespaces: r.namespaces(t), Cues: cues}, func(e Event) {
				if e.Kind == EventCommand {
					got = append(got, e.Command)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			checkRecording(t, r, got)
		})
		for _, piece := range []int{64, 7} {
			if st, err := os.Stat(r.raw); piece < 64 && (err != nil || st.Size() > 64<<10) {
				continue // the race detector makes tiny pieces of big files slow
			}
			t.Run(fmt.Sprintf("%s/pieces=%d", r.name, piece), func(t *testing.T) {
				data, err := os.ReadFile(r.raw)
				if err != nil {
					t.Fatal(err)
				}
				cues, _ := CuesFor(r.profile)
				clk := &clock{t: time.Unix(0, 0)}
				s := New(Options{Cols: r.Cols, Rows: r.Rows, Namespaces: r.namespaces(t), Cues: cues, Now: clk.now})
				var got []patterns.Command
				s.Subscribe(func(e Event) {
					if e.Kind == EventCommand {
						got = append(got, e.Command)
					}
				})
				// Pieces of a frame arrive a few microseconds apart (a
				// program writes a frame in one go) and the scanner reads
				// the half-drawn frames in between; between frames the
				// program pauses long enough for the scanner to read the
				// frame.
				for _, frame := range splitFrames(data) {
					for k := 0; len(frame) > 0; k++ {
						n := min(piece, len(frame))
						s.Write(frame[:n])
						frame = frame[n:]
						clk.advance(20 * time.Microsecond)
						if k%4 == 0 {
							s.Tick()
						}
					}
					clk.advance(time.Second)
					s.Tick()
				}
				s.Flush()
				checkRecording(t, r, got)
			})
		}
	}
}

func checkRecording(t *testing.T, r *recording, got []patterns.Command) {
	t.Helper()
	for i, m := range r.Must {
		want := 0 // the same command may be a must more than once (two replies)
		for _, o := range r.Must {
			if o == m {
				want++
			}
		}
		if prev := slices.IndexFunc(r.Must[:i], func(o mustCmd) bool { return o == m }); prev >= 0 {
			continue
		}
		n := 0
		for _, c := range got {
			body, want := c.Body, m.Body
			if !c.Block {
				body, want = collapse(body), collapse(want)
			}
			if c.NS == m.NS && c.Target == m.Target && body == want {
				n++
			}
		}
		if n != want {
			t.Errorf("@%s:%s %q fired %d times, want %d; all: %+v", m.NS, m.Target, m.Body, n, want, got)
		}
	}
	for _, c := range got {
		known := false
		for _, m := range r.Must {
			body, want := c.Body, m.Body
			if !c.Block {
				body, want = collapse(body), collapse(want)
			}
			known = known || c.NS == m.NS && c.Target == m.Target && body == want
		}
		for _, e := range r.Either {
			known = known || c.NS == e.NS && c.Target == e.Target
		}
		if !known {
			t.Errorf("fired @%s:%s %q, which is neither a must nor an either case (a partial or garbled body?)", c.NS, c.Target, c.Body)
		}
		for _, b := range r.MustNot {
			if c.NS == b.NS && c.Target == b.Target {
				t.Errorf("fired @%s:%s %q, which must not fire", c.NS, c.Target, c.Body)
			}
		}
		for _, e := range r.Either {
			if c.NS == e.NS && c.Target == e.Target {
				if strings.Contains(e.Why, "code") {
					t.Errorf("fired @%s:%s %q from a code block (%s)", c.NS, c.Target, c.Body, e.Why)
				} else {
					t.Logf("screen path fires @%s:%s (the raw path must not: %s)", c.NS, c.Target, e.Why)
				}
			}
		}
	}
}
