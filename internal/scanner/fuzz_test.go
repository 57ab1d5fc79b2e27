package scanner

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/patterns"
)

func FuzzScanner(f *testing.F) {
	f.Add([]byte("@relay:Bob hi\r\n\r\n"), uint8(3))
	f.Add([]byte("\x1b[?1049h\x1b[2J\x1b[H● @relay:Bob <<<\r\n  a\r\n\r\n\x1b[3J"), uint8(7))
	f.Add([]byte("\x1b[38;5;153m@relay:X y\x1b[m\r\n\x1b[5;1H\x1b[2K@broadcast: z\r\n\r\n"), uint8(1))
	f.Add([]byte("\x1b[10;20r\x1b[20;1H\n\n\n@memory:save x\r\n\r\n\x1b[r\xff\xfe"), uint8(200))
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		// Bounded time: one input must not take seconds.
		tm := time.AfterFunc(10*time.Second, func() { panic("one input took over 10 s") })
		defer tm.Stop()
		clk := &clock{t: time.Unix(0, 0)}
		cues, _ := CuesFor("claude")
		s := New(Options{Cols: 30, Rows: 8, Cues: cues, Now: clk.now})
		s.Subscribe(func(e Event) {
			if e.Kind == EventCommand && len(e.Command.Body) > patterns.MaxBodyBytes {
				t.Fatalf("body of %d bytes", len(e.Command.Body))
			}
		})
		cut := int(split) % (len(data) + 1)
		s.Write(data[:cut])
		clk.advance(time.Second)
		s.Tick()
		s.MarkInjected(string(data[cut:]))
		// The line index only makes the search quicker: whatever it
		// finds, the search over the typed texts finds too.
		for _, l := range strings.FieldsFunc(string(data), func(r rune) bool { return r == '\n' || r == '\r' }) {
			if core := injectedCore(l); s.injLines[core] > 0 && !s.searchInjected(core) {
				t.Fatalf("the line index knows %q, the typed texts do not hold it", core)
			}
		}
		s.Write(data[cut:])
		clk.advance(time.Second)
		s.Tick()
		s.Resize(20, 5)
		s.Write(data)
		s.Flush()
		if len(s.hist) > maxHistory || len(s.occ.order) > maxOccurrences || len(s.injected) > maxInjected {
			t.Fatalf("unbounded state: %d history, %d occurrences, %d injected", len(s.hist), len(s.occ.order), len(s.injected))
		}
	})
}

func FuzzReplay(f *testing.F) {
	f.Add([]byte("{\"version\": 2, \"width\": 20, \"height\": 4}\n[0.1, \"o\", \"@relay:Bob hi\\r\\n\\r\\n\"]\n[0.2, \"r\", \"10x3\"]\n"))
	f.Add([]byte("{\"version\": 1}\n"))
	f.Add([]byte("{not json\n@relay:Bob raw\r\n\r\n"))
	f.Add([]byte("{\"version\": 2}\n[1e300, \"o\", \"x\"]\n[-1, \"o\", \"\"]\n[0, \"r\", \"0x0\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = Replay(context.Background(), bytes.NewReader(data), ReplayOptions{Name: "fuzz-30x8.cast"}, func(Event) {})
	})
}
