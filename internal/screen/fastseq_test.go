package screen

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// twinScreens is a screen with the fast paths and one without, fed the same
// bytes, each with a log of what its callbacks received.
type twinScreens struct {
	fast, slow       *Screen
	fastLog, slowLog []string
}

func newTwins(cols, rows int) *twinScreens {
	tw := &twinScreens{}
	mk := func(log *[]string) *Screen {
		var s *Screen
		s = NewWithOptions(Options{
			Cols: cols, Rows: rows,
			OnScrollOff: func(l Line) { *log = append(*log, fmt.Sprintf("scroll %+v", l)) },
			OnTitle:     func(t string) { *log = append(*log, "title "+t) },
			OnOSC:       func(n int, p string) { *log = append(*log, fmt.Sprintf("osc %d %s", n, p)) },
			OnAltScreen: func(alt bool) {
				*log = append(*log, fmt.Sprintf("alt %v", alt))
				s.MarkLine(2)
			},
		})
		return s
	}
	tw.fast = mk(&tw.fastLog)
	tw.slow = mk(&tw.slowLog)
	tw.slow.noFast = true
	return tw
}

// write feeds p to both screens and fails t at the first difference.
func (tw *twinScreens) write(t testing.TB, p []byte) {
	t.Helper()
	tw.fast.Write(p)
	tw.slow.Write(p)
	tw.compare(t, p)
}

// writeOnly feeds p to both screens without comparing them.
func (tw *twinScreens) writeOnly(p []byte) {
	tw.fast.Write(p)
	tw.slow.Write(p)
}

// screenState is everything of a Screen that either path may change, less
// the generic path's own parsing state (the x/ansi parser, seqNum).
type screenState struct {
	Cols, Rows, CX, CY, RUpper, RLower int
	Pen                                cell
	Tabs                               []bool
	Modes                              [7]bool
	Saved, AltSaved                    savedCursor
	Title                              string
	Version                            uint64
	Main, Alt                          []row
	Moved                              [2]uint64
	OnAlt                              bool
	PrintMark, CutMark                 Mark
	CutRow                             int
	Clusters                           []string
	State, UHave, UNeed                int
	UBuf                               [4]byte
	UBad, ZWJ                          bool
	Last                               rune
	OSC                                string
	Lines                              []Line
	RowVersions                        []uint64
}

func stateOf(s *Screen) screenState {
	st := screenState{
		Cols: s.cols, Rows: s.rows, CX: s.cx, CY: s.cy, RUpper: s.rupper, RLower: s.rlower,
		Pen: s.pen, Tabs: s.tabs,
		Modes: [7]bool{s.autowrap, s.origin, s.insert, s.cursorVisible, s.bracketedPaste, s.sync, s.marking},
		Saved: s.saved, AltSaved: s.altSaved, Title: s.title, Version: s.version,
		OnAlt: s.cur == s.alt, PrintMark: s.printMark, CutMark: s.cutMark, CutRow: -1,
		Clusters: s.clusters, State: s.state, UHave: s.uhave, UNeed: s.uneed, UBuf: s.ubuf,
		UBad: s.ubad, ZWJ: s.zwj, Last: s.last, OSC: string(s.osc),
	}
	rowsOf := func(b *buffer) []row {
		if b == nil {
			return nil
		}
		out := make([]row, len(b.rows))
		for y, r := range b.rows {
			out[y] = *r
			if r == s.cutRow {
				st.CutRow = y
			}
		}
		return out
	}
	st.Main, st.Alt = rowsOf(s.main), rowsOf(s.alt)
	st.Moved[0] = s.main.moved
	if s.alt != nil {
		st.Moved[1] = s.alt.moved
	}
	for y := range s.rows {
		st.RowVersions = append(st.RowVersions, s.RowVersion(y))
	}
	return st
}

// compare fails t when the two screens differ in any state, in the rows
// they would report as changed (versions), or in the Lines they build.
func (tw *twinScreens) compare(t testing.TB, after []byte) {
	t.Helper()
	f, sl := stateOf(tw.fast), stateOf(tw.slow)
	if !equalStates(f, sl) {
		t.Fatalf("after %q: fast and generic paths differ:\n%s", after, stateDiff(f, sl))
	}
	fl, sll := tw.fast.Lines(), tw.slow.Lines()
	if !reflect.DeepEqual(fl, sll) {
		t.Fatalf("after %q: lines differ:\nfast    %+v\ngeneric %+v", after, fl, sll)
	}
	if tw.fast.Text() != tw.slow.Text() {
		t.Fatalf("after %q: text differs:\nfast\n%s\ngeneric\n%s", after, tw.fast.Text(), tw.slow.Text())
	}
	if !reflect.DeepEqual(tw.fastLog, tw.slowLog) {
		t.Fatalf("after %q: callbacks differ:\nfast    %q\ngeneric %q", after, tw.fastLog, tw.slowLog)
	}
}

// equalStates reports whether a and b are equal; reflect.DeepEqual alone
// is slow on the cells, which are compared directly.
func equalStates(a, b screenState) bool {
	for _, bufs := range [][2][]row{{a.Main, b.Main}, {a.Alt, b.Alt}} {
		ra, rb := bufs[0], bufs[1]
		if len(ra) != len(rb) {
			return false
		}
		for y := range ra {
			if !slices.Equal(ra[y].cells, rb[y].cells) {
				return false
			}
			ka, kb := ra[y], rb[y]
			ka.cells, kb.cells = nil, nil
			if !reflect.DeepEqual(ka, kb) {
				return false
			}
		}
	}
	a.Main, a.Alt, b.Main, b.Alt = nil, nil, nil, nil
	return reflect.DeepEqual(a, b)
}

// stateDiff names the fields of screenState that differ; for the rows,
// the first row that differs and how.
func stateDiff(a, b screenState) string {
	var sb strings.Builder
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		fa, fb := va.Field(i).Interface(), vb.Field(i).Interface()
		if reflect.DeepEqual(fa, fb) {
			continue
		}
		name := va.Type().Field(i).Name
		if ra, ok := fa.([]row); ok {
			sb.WriteString(rowsDiff(name, ra, fb.([]row)))
			continue
		}
		fmt.Fprintf(&sb, "%s:\n  fast    %+v\n  generic %+v\n", name, fa, fb)
	}
	return sb.String()
}

// rowsDiff describes the first row that differs between two buffers.
func rowsDiff(name string, a, b []row) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%s: %d rows, generic %d\n", name, len(a), len(b))
	}
	for y := range a {
		ra, rb := a[y], b[y]
		if reflect.DeepEqual(ra, rb) {
			continue
		}
		txt := func(r row) string {
			var sb strings.Builder
			for _, c := range r.cells {
				sb.WriteString(string(max(c.ch, ' ')))
			}
			return strings.TrimRight(sb.String(), " ")
		}
		out := fmt.Sprintf("%s row %d: fast %q, generic %q\n", name, y, txt(ra), txt(rb))
		for x := range min(len(ra.cells), len(rb.cells)) {
			if ra.cells[x] != rb.cells[x] {
				out += fmt.Sprintf("  first cell differing: %d: fast %+v, generic %+v\n", x, ra.cells[x], rb.cells[x])
				break
			}
		}
		ra.cells, rb.cells = nil, nil
		return out + fmt.Sprintf("  fast    %+v\n  generic %+v\n", ra, rb)
	}
	return ""
}

// fastSeqCases are streams aimed at the edges of fastSeq: what it must
// leave to the generic path and what it must read exactly as x/ansi does.
var fastSeqCases = []string{
	"\x1b[Ha\x1b[;Hb\x1b[5;Hc\x1b[;5Hd\x1b[0;0He\x1b[2;3;4Hf",
	"\x1b[2147483646Ha\x1b[2147483647Hb\x1b[2147483648Hc\x1b[99999999999;2Hd\x1b[1;2147483647He\x1b[21474836471Hf\x1b[3;21474836470Hg",
	"\x1b[" + strings.Repeat("1;", 22) + "1mA\x1b[" + strings.Repeat("1;", 23) + "1mB\x1b[" + strings.Repeat(";", 24) + "mC",
	"\x1b[?25l\x1b[?1049h\x1b[?1049l\x1b[?2004h\x1b[?7l0123456789abcdef\x1b[?7h\x1b[>0q\x1b[=1;2m\x1b[<5mX\x1b[?6;1h",
	"\x1b[1?h\x1b[3;?4H\x1b[ q\x1b[1 qx\x1b[38:5:1mA\x1b[38;5;1mB\x1b[4:3mC\x1b[1\x07;2HD\x1b[1\x1b[2HE",
	"\x1b7\x1b8\x1bM\x1bD\x1bE\x1bH\x1bc\x1b#8\x1b(0q\x1b(B\x1b\\\x1b=\x1b>\x1bZ\x1b\x1b[H\x1b\x80[H",
	"ab\x1b[3bc\x1b[b\x1b[0b\x1b[m\x1b[;m\x1b[1;;31m\x1b[38;2;1;2;3m\x1b[48;5;300m",
	"\x1b]0;title\x07\x1b]7501;state=idle\x1b\\\x1bPq\x1b\\\x1b_x\x1b\\\x1bkname\x1b\\\x1bX\x1b\\\x1b^\x1b\\",
	"\xe2\x9c\x1b[mb\xe2\x1b7\x9c\xb3\x1b[2Kc",
	"\x1b[2J\x1b[3J\x1b[1;24r\x1b[5;10r\x1b[r\x1b[s\x1b[u\x1b[4h ab\x1b[4l\x1b[3g\x1b[g\x1b[2@\x1b[2P\x1b[2X\x1b[2Z",
}

// TestFastSeqMatchesGeneric replays every recording and our own streams
// through both paths, in writes of several sizes (sequences split at every
// point), and requires the same screen, rows, versions and callbacks.
func TestFastSeqMatchesGeneric(t *testing.T) {
	type stream struct {
		name       string
		cols, rows int
		data       []byte
	}
	var streams []stream
	files, _ := filepath.Glob("../../testdata/recordings/*/*.raw")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, stream{filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f), 100, 30, data})
	}
	for _, c := range synthCases() {
		streams = append(streams, stream{c.name, c.cols, c.rows, []byte(c.data)})
	}
	for i, c := range fastSeqCases {
		streams = append(streams, stream{fmt.Sprintf("edge-%d", i), 10, 5, []byte(c)})
	}
	for _, st := range streams {
		for _, chunk := range []int{1, 3, 7, 4096} {
			t.Run(fmt.Sprintf("%s/%d", st.name, chunk), func(t *testing.T) {
				tw := newTwins(st.cols, st.rows)
				every := max(1, 1024/chunk) // compare about every KB: bounded time
				data := st.data
				if chunk < 7 {
					data = data[:min(len(data), 64<<10)] // bounded time
				}
				for k := 0; len(data) > 0; k++ {
					n := min(chunk, len(data))
					if k%every == 0 || n == len(data) {
						tw.write(t, data[:n])
					} else {
						tw.writeOnly(data[:n])
					}
					data = data[n:]
				}
			})
		}
	}
}

// FuzzFastSeq feeds random bytes, in writes of random sizes, to a screen
// with the fast paths and one without and requires the same state after
// every write: cells, cursor, modes, versions (the dirty rows a reader
// sees), Lines and callbacks.
func FuzzFastSeq(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/recordings/*/*.raw")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(uint8(100), uint8(30), []byte{200, 3, 90}, data[:min(len(data), 8<<10)])
		}
	}
	for _, c := range synthCases() {
		f.Add(uint8(c.cols), uint8(c.rows), []byte{1, 2, 3}, []byte(c.data))
	}
	for _, c := range fastSeqCases {
		f.Add(uint8(10), uint8(5), []byte{255}, []byte(c))
		f.Add(uint8(10), uint8(5), []byte{4, 1}, []byte(c))
	}
	f.Fuzz(func(t *testing.T, cols, rows uint8, steps, data []byte) {
		tw := newTwins(int(cols)%120+1, int(rows)%40+1)
		for i := 0; len(data) > 0; i++ {
			n := 1
			if len(steps) > 0 {
				n = int(steps[i%len(steps)]) + 1
			}
			n = min(max(n, len(data)/500), len(data))
			if i%8 == 0 || n == len(data) {
				tw.write(t, data[:n])
			} else {
				tw.writeOnly(data[:n]) // bounded time: compared every 8 writes
			}
			data = data[n:]
		}
	})
}

// seqTokens is the vocabulary of FuzzFastSeqTokens: the pieces escape
// sequences are made of, so that random inputs are mostly sequences, with
// the numbers and bytes at the edges of what fastSeq reads itself.
var seqTokens = []string{
	"\x1b[", "\x1b[", "\x1b[", "\x1b[?", "\x1b[>", "\x1b", "\x1b]0;t\x07", "\x1bP1$q\x1b\\",
	";", ";", ";", ":", "?", " ", "$", "\x07", "\r\n", "\x80",
	"0", "1", "2", "3", "5", "7", "9", "38;5;", "48;2;", "25", "1049", "2147483647", "2147483648", "65535",
	"m", "m", "H", "r", "J", "K", "@", "P", "L", "M", "S", "T", "X", "b", "d", "G", "h", "l",
	"A", "B", "C", "D", "E", "F", "Z", "g", "s", "u", "q", "7", "8", "c", "k", "\\",
	"ab", "xyz", "中", "é", "\u0301", "═",
}

// FuzzFastSeqTokens is FuzzFastSeq on streams made of seqTokens (each byte
// of data picks one), which reach the parameter edges far more often than
// random bytes do.
func FuzzFastSeqTokens(f *testing.F) {
	f.Add(uint8(10), uint8(5), uint8(3), []byte{0, 30, 20, 12, 22, 34, 64})
	f.Add(uint8(20), uint8(6), uint8(200), []byte{0, 27, 12, 12, 23, 34, 66, 0, 28, 12, 12, 35})
	f.Fuzz(func(t *testing.T, cols, rows, step uint8, data []byte) {
		var sb strings.Builder
		for _, b := range data {
			sb.WriteString(seqTokens[int(b)%len(seqTokens)])
		}
		stream := []byte(sb.String())
		tw := newTwins(int(cols)%40+1, int(rows)%12+1)
		for len(stream) > 0 {
			n := min(int(step)%64+1, len(stream))
			tw.write(t, stream[:n])
			stream = stream[n:]
		}
	})
}

// Pieces of the random sequences of TestFastSeqRandomSequences.
var (
	seqParams = []string{"", "", "0", "1", "2", "3", "4", "5", "6", "7", "25", "38", "48", "1049", "65535", "2147483647", "2147483648", "1:2", "?1"}
	seqFinals = "mmmHHrJKK@PLMSTXbdGhlABCDEFZgsuqt`fpx"
	seqOther  = []string{"ab", "xyz ", "中", "é", "\u0301", "═", "\r\n", "\n", "\b", "\t", "\x07", "\x1b7", "\x1b8", "\x1bM", "\x1bD", "\x1bc", "\x1b]0;t\x07", "\x1b(0", "\x1b\x1b[", "\x80"}
)

// randomSequences returns a stream of random CSI sequences (prefixes,
// missing, edge and sub-parameters, up to 26 of them) mixed with text,
// controls and other escape sequences.
func randomSequences(rng *rand.Rand) []byte {
	var sb strings.Builder
	for range 10 + rng.IntN(100) {
		if rng.IntN(3) == 0 {
			sb.WriteString(seqOther[rng.IntN(len(seqOther))])
			continue
		}
		sb.WriteString("\x1b[")
		if rng.IntN(6) == 0 {
			sb.WriteByte("<=>?"[rng.IntN(4)])
		}
		n := rng.IntN(6)
		if rng.IntN(20) == 0 {
			n = 20 + rng.IntN(7)
		}
		for k := range n {
			if k > 0 {
				sb.WriteByte(';')
			}
			sb.WriteString(seqParams[rng.IntN(len(seqParams))])
		}
		if rng.IntN(30) == 0 {
			sb.WriteByte(" $#"[rng.IntN(3)])
		}
		sb.WriteByte(seqFinals[rng.IntN(len(seqFinals))])
	}
	return []byte(sb.String())
}

// TestFastSeqRandomSequences compares the two paths on thousands of random
// sequence streams from fixed seeds: the same every run, and enough to
// reach parameter combinations random bytes (and FuzzFastSeqTokens in a
// short run) seldom do, such as an empty parameter inside a colour.
func TestFastSeqRandomSequences(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 1))
	n := 4000
	if testing.Short() || raceEnabled {
		n = 400 // the race detector makes each one slow
	}
	for range n {
		stream := randomSequences(rng)
		tw := newTwins(1+rng.IntN(30), 1+rng.IntN(8))
		step := 1 + rng.IntN(64)
		for len(stream) > 0 {
			k := min(step, len(stream))
			tw.write(t, stream[:k])
			stream = stream[k:]
		}
	}
}

// TestPrintableEnd checks the word-at-a-time scan against the byte loop
// for every byte value at every position of a word and across words.
func TestPrintableEnd(t *testing.T) {
	slow := func(p []byte, i int) int {
		for i < len(p) && p[i] >= 0x20 && p[i] < 0x7f {
			i++
		}
		return i
	}
	for n := range 20 {
		for pos := range n {
			for b := range 256 {
				p := []byte(strings.Repeat("a~ z", 5)[:n])
				p[pos] = byte(b)
				for start := range min(n, 3) {
					if got, want := printableEnd(p, start), slow(p, start); got != want {
						t.Fatalf("printableEnd(%q, %d) = %d, want %d", p, start, got, want)
					}
				}
			}
		}
	}
}

// TestDecodeRune checks decodeRune against utf8.DecodeRune on every two-
// and three-byte sequence (and the bytes after a lead byte cut short).
func TestDecodeRune(t *testing.T) {
	check := func(p []byte) {
		r, n := decodeRune(p)
		wr, wn := utf8.DecodeRune(p)
		if r != wr || n != wn {
			t.Fatalf("decodeRune(% x) = %U, %d; utf8.DecodeRune %U, %d", p, r, n, wr, wn)
		}
	}
	for b0 := 0x80; b0 < 0x100; b0++ {
		for b1 := range 0x100 {
			check([]byte{byte(b0), byte(b1)})
			check([]byte{byte(b0), byte(b1), 'x'})
			for _, b2 := range []byte{0x00, 0x41, 0x7f, 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xff} {
				check([]byte{byte(b0), byte(b1), b2})
				check([]byte{byte(b0), byte(b1), b2, 0x80})
			}
		}
	}
}
