package screen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	vte "github.com/danielgatis/go-vte"
	"github.com/vito/midterm"
)

// benchBytes is how much each benchmark operation replays: the recordings
// are only a few KB, so one operation writes them over and over.
const benchBytes = 50 << 20

// benchStream is a recording or generated text with its screen size.
type benchStream struct {
	cols, rows int
	data       []byte
}

// claudeStreams loads the Claude Code recordings.
func claudeStreams(b *testing.B) []benchStream {
	var out []benchStream
	for _, st := range recordings(b) {
		if strings.HasPrefix(st.name, "claude-code") {
			out = append(out, benchStream{st.cols, st.rows, st.data})
		}
	}
	if len(out) == 0 {
		b.Fatal("no Claude Code recordings")
	}
	return out
}

// agentStreams loads every recording (Claude Code, Codex, Gemini).
func agentStreams(b *testing.B) []benchStream {
	var out []benchStream
	for _, st := range recordings(b) {
		out = append(out, benchStream{st.cols, st.rows, st.data})
	}
	return out
}

// plainStream is log-like scrolling text: lines of varying length, some
// longer than the 100-column screen so that they wrap.
func plainStream() []benchStream {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "2026-12-02T15:20:%02d.%03dZ INFO request handled path=/api/v1/items/%d status=200 dur=%d.%dms",
			i%60, i%1000, i*7919%100000, i%97, i%10)
		if i%5 == 0 {
			sb.WriteString(" user_agent=\"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)\"")
		}
		sb.WriteString("\r\n")
	}
	return []benchStream{{100, 30, []byte(sb.String())}}
}

// run replays streams through write until benchBytes were written, per
// operation, and reports MB/s.
func run(b *testing.B, streams []benchStream, newWriter func(cols, rows int) func([]byte)) {
	b.Helper()
	writers := make([]func([]byte), len(streams))
	for i, st := range streams {
		writers[i] = newWriter(st.cols, st.rows)
	}
	b.SetBytes(benchBytes)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for n < benchBytes {
			for i, st := range streams {
				writers[i](st.data)
				n += len(st.data)
			}
		}
	}
}

func screenWriter(cols, rows int) func([]byte) {
	lines := 0
	s := NewWithOptions(Options{Cols: cols, Rows: rows, OnScrollOff: func(Line) { lines++ }})
	return func(p []byte) { s.Write(p) }
}

// xansiWriter feeds the bare x/ansi parser (the ceiling: our model uses it
// for escape sequences), with handlers that do nothing.
func xansiWriter(int, int) func([]byte) {
	p := ansi.NewParser()
	p.SetHandler(ansi.Handler{
		Print:     func(rune) {},
		Execute:   func(byte) {},
		HandleCsi: func(ansi.Cmd, ansi.Params) {},
		HandleEsc: func(ansi.Cmd) {},
		HandleOsc: func(int, []byte) {},
	})
	return func(data []byte) {
		for _, c := range data {
			p.Advance(c)
		}
	}
}

type nopPerformer struct{}

func (nopPerformer) Print(rune)                                 {}
func (nopPerformer) Execute(byte)                               {}
func (nopPerformer) Put(byte)                                   {}
func (nopPerformer) Unhook()                                    {}
func (nopPerformer) Hook([][]uint16, []byte, bool, rune)        {}
func (nopPerformer) OscDispatch([][]byte, bool)                 {}
func (nopPerformer) CsiDispatch([][]uint16, []byte, bool, rune) {}
func (nopPerformer) EscDispatch([]byte, bool, byte)             {}

// vteWriter feeds the bare go-vte parser, the other candidate.
func vteWriter(int, int) func([]byte) {
	p := vte.NewParser(nopPerformer{})
	return func(data []byte) {
		for _, c := range data {
			p.Advance(c)
		}
	}
}

// midtermWriter feeds vito/midterm, the fastest correct full model we
// measured among existing libraries.
func midtermWriter(cols, rows int) func([]byte) {
	t := midterm.NewTerminal(rows, cols)
	return func(p []byte) { t.Write(p) }
}

func BenchmarkScreenClaude(b *testing.B) { run(b, claudeStreams(b), screenWriter) }
func BenchmarkScreenPlain(b *testing.B)  { run(b, plainStream(), screenWriter) }
func BenchmarkScreenAgents(b *testing.B) { run(b, agentStreams(b), screenWriter) }

func BenchmarkParserXAnsiClaude(b *testing.B) { run(b, claudeStreams(b), xansiWriter) }
func BenchmarkParserXAnsiPlain(b *testing.B)  { run(b, plainStream(), xansiWriter) }

func BenchmarkParserVTEClaude(b *testing.B) { run(b, claudeStreams(b), vteWriter) }
func BenchmarkParserVTEPlain(b *testing.B)  { run(b, plainStream(), vteWriter) }

func BenchmarkMidtermClaude(b *testing.B) { run(b, claudeStreams(b), midtermWriter) }
func BenchmarkMidtermPlain(b *testing.B)  { run(b, plainStream(), midtermWriter) }

// BenchmarkLines measures reading the screen back, which the scanner does
// after writes.
func BenchmarkLines(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "recordings", "claude-code-2.1.328", "multi-80x24.raw"))
	if err != nil {
		b.Fatal(err)
	}
	s := New(80, 24)
	s.Write(data)
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Lines()
	}
}
