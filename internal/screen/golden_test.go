package screen

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.txt from tmux")

// stream is a byte stream with the screen size it was written for.
type stream struct {
	name       string
	cols, rows int
	data       []byte
}

// recordings loads the raw recordings of ../../testdata/recordings with the
// sizes from their .json files.
func recordings(t testing.TB) []stream {
	t.Helper()
	files, err := filepath.Glob("../../testdata/recordings/*/*.raw")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recordings in ../../testdata/recordings")
	}
	var out []stream
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		meta, err := os.ReadFile(strings.TrimSuffix(f, ".raw") + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var size struct{ Cols, Rows int }
		if err := json.Unmarshal(meta, &size); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := filepath.Base(filepath.Dir(f)) + "-" + strings.TrimSuffix(filepath.Base(f), ".raw")
		out = append(out, stream{name, size.Cols, size.Rows, data})
	}
	return out
}

// allStreams returns the recordings and the synthetic streams.
func allStreams(t testing.TB) []stream {
	out := recordings(t)
	for _, c := range synthCases() {
		out = append(out, stream{"synth-" + c.name, c.cols, c.rows, []byte(c.data)})
	}
	return out
}

// TestGolden replays every stream and compares Text with tmux's capture
// stored in testdata/golden (rewritten from a live tmux with -update): whole,
// one byte per Write (UTF-8 and sequences split everywhere), and in chunks.
func TestGolden(t *testing.T) {
	for _, st := range allStreams(t) {
		t.Run(st.name, func(t *testing.T) {
			golden := filepath.Join("testdata", "golden", st.name+".txt")
			if *update {
				requireReferenceTmux(t)
				want := tmuxCapture(t, st.cols, st.rows, st.data)
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if errors.Is(err, fs.ErrNotExist) {
				// A recording added without its golden file: compare with
				// a live tmux (skipped without one) until -update stores it.
				t.Logf("no %s yet: comparing with a live tmux (store it with go test ./internal/screen -run TestGolden -update)", golden)
				requireReferenceTmux(t)
				want, err = []byte(tmuxCapture(t, st.cols, st.rows, st.data)), nil
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, chunk := range []int{0, 1, 7} {
				s := New(st.cols, st.rows)
				feed(s, st.data, chunk)
				if got := s.Text(); got != string(want) {
					t.Errorf("chunk %d: screen differs from tmux:\n%s", chunk, diffText(string(want), got))
				}
			}
		})
	}
}

// feed writes data to s in chunks of n bytes (all at once when n is 0).
func feed(s *Screen, data []byte, n int) {
	if n <= 0 {
		s.Write(data)
		return
	}
	for len(data) > 0 {
		k := min(n, len(data))
		s.Write(data[:k])
		data = data[k:]
	}
}

// diffText shows the rows where want and got differ.
func diffText(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var sb strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		mark := "  "
		if a != b {
			mark = "! "
		}
		sb.WriteString(mark + "tmux  |" + a + "|\n")
		if a != b {
			sb.WriteString(mark + "model |" + b + "|\n")
		}
	}
	return sb.String()
}

// TestAgainstTmux compares every stream, and more random ones, with a live
// tmux (skipped without tmux, and with -short): the text, the rows tmux
// marks as soft-wrapped (`capture-pane -pJ` joins them) and the cursor.
func TestAgainstTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("live tmux comparison skipped with -short")
	}
	requireReferenceTmux(t)
	streams := allStreams(t)
	soups := 10
	if n, err := strconv.Atoi(os.Getenv("SCREEN_SOUPS")); err == nil {
		soups = n // more random streams, for a longer hunt
	}
	for seed := uint64(100); seed < 100+uint64(soups); seed++ {
		c := soup(seed)
		streams = append(streams, stream{c.name, c.cols, c.rows, []byte(c.data)})
	}
	for _, st := range streams {
		t.Run(st.name, func(t *testing.T) {
			out := tmuxCaptures(t, st.cols, st.rows, st.data, "-p", "-pJ", "cursor")
			s := New(st.cols, st.rows)
			s.Write(st.data)
			if got := s.Text(); got != out[0] {
				t.Errorf("screen differs from tmux:\n%s", diffText(out[0], got))
			}
			if want, got := trimLines(out[1]), joined(s); got != want {
				t.Errorf("wrapped rows differ from tmux:\n%s", diffText(want, got))
			}
			if got := fmt.Sprintf("%d,%d", s.cx, s.cy); got != out[2] {
				t.Errorf("cursor at %s, tmux has it at %s", got, out[2])
			}
		})
	}
}

// TestBisect finds the shortest prefix of the synthetic stream named by
// $SCREEN_BISECT on which the model and tmux differ (a debugging aid).
func TestBisect(t *testing.T) {
	name := os.Getenv("SCREEN_BISECT")
	if name == "" {
		t.Skip("set SCREEN_BISECT to a synthetic case name")
	}
	cases := synthCases()
	if seed, err := strconv.ParseUint(strings.TrimPrefix(name, "soup-"), 10, 64); err == nil {
		cases = append(cases, soup(seed))
	}
	for _, c := range cases {
		if c.name != name {
			continue
		}
		lo, hi := 0, len(c.data)
		for lo < hi {
			mid := (lo + hi) / 2
			s := New(c.cols, c.rows)
			s.Write([]byte(c.data[:mid+1]))
			out := tmuxCaptures(t, c.cols, c.rows, []byte(c.data[:mid+1]), "-p", "-pJ", "cursor")
			if s.Text() == out[0] && joined(s) == trimLines(out[1]) && fmt.Sprintf("%d,%d", s.cx, s.cy) == out[2] {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		s := New(c.cols, c.rows)
		s.Write([]byte(c.data[:lo+1]))
		t.Logf("first difference after byte %d: ...%q", lo, c.data[max(0, lo-120):lo+1])
		out := tmuxCaptures(t, c.cols, c.rows, []byte(c.data[:lo+1]), "-p", "-pJ", "cursor")
		t.Logf("cursor: tmux %s, model %d,%d", out[2], s.cx, s.cy)
		t.Log(diffText(out[0], s.Text()))
		t.Log(diffText(trimLines(out[1]), joined(s)))
	}
}

// TestWidthAgainstTmux checks the width table on a sample of code points
// (every 89th from U+0300 up, plus emoji and CJK) with a live tmux: each
// row prints "ab", the character and a bar at column 8, so the spaces
// before the bar show the width tmux gave the character.
func TestWidthAgainstTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("live tmux comparison skipped with -short")
	}
	requireReferenceTmux(t)
	var cps []rune
	for r := rune(0x300); r < 0x20000; r += 89 {
		if r < 0xd800 || r > 0xdfff {
			cps = append(cps, r)
		}
	}
	cps = append(cps, '中', '😀', '👍', '✅', '❤', '⚡', '☕', '✳', '❯', '●', '⏵', '─', 0x1f1eb, 0x1faf0, 0x3000, 0xff01, 0x200b, 0xad, 0x1160)
	const batch = 150
	for len(cps) > 0 {
		n := min(batch, len(cps))
		var sb strings.Builder
		for i, r := range cps[:n] {
			if i > 0 {
				sb.WriteString("\r\n")
			}
			sb.WriteString("ab" + string(r) + "\x1b[8G|")
		}
		want := tmuxCapture(t, 20, n, []byte(sb.String()))
		s := New(20, n)
		s.Write([]byte(sb.String()))
		if got := s.Text(); got != want {
			w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
			for i := range min(len(w), len(g)) {
				if w[i] != g[i] {
					t.Errorf("U+%04X: tmux %q, model %q", cps[i], w[i], g[i])
				}
			}
		}
		cps = cps[n:]
	}
}

// joined renders the screen as `capture-pane -pJ` does, without spaces
// (tmux keeps or drops erased cells at the end of a wrapped row depending on
// how they were erased; -p already checks the spacing): a wrapped row runs
// on into the next.
func joined(s *Screen) string {
	var sb strings.Builder
	for _, r := range s.cur.rows {
		for x := 0; x < r.used; x++ {
			if c := &r.cells[x]; c.flags&flagTail == 0 {
				sb.Write(appendCell(nil, c, s.clusters))
			}
		}
		if !r.wrapped {
			sb.WriteByte('\n')
		}
	}
	return strings.ReplaceAll(sb.String(), " ", "")
}

// trimLines prepares a `capture-pane -pJ` output for comparison with
// joined: without spaces.
func trimLines(s string) string {
	return strings.ReplaceAll(s, " ", "")
}
