package screen

import (
	"strings"
	"testing"
)

// stringIntros are the starts of every kind of terminal string: OSC, DCS
// (before and after its final byte), APC, PM, SOS and screen's ESC k.
var stringIntros = []struct{ name, intro string }{
	{"osc", "\x1b]0;"},
	{"dcs-head", "\x1bP"},
	{"dcs-data", "\x1bPq"},
	{"dcs-after-esc", "\x1bPq#0\x1b["},
	{"apc", "\x1b_G"},
	{"pm", "\x1b^"},
	{"sos", "\x1bX"},
	{"esc-k", "\x1bk"},
}

// TestStringEndsAtCANAndSUB: CAN and SUB end every string, DCS data too
// (tmux 3.3a reads them as data inside a DCS and stays blind; a DEC
// terminal and xterm end the string), and what follows is drawn.
func TestStringEndsAtCANAndSUB(t *testing.T) {
	for _, st := range stringIntros {
		for _, end := range []string{"\x18", "\x1a"} {
			t.Run(st.name+"-"+map[string]string{"\x18": "can", "\x1a": "sub"}[end], func(t *testing.T) {
				for _, chunk := range []int{0, 1} {
					s := New(40, 3)
					feed(s, []byte("a"+st.intro+"data"+end+"@relay:Bob after"), chunk)
					if got := s.Line(0).Text; got != "a@relay:Bob after" {
						t.Errorf("chunk %d: row 0 = %q, want %q", chunk, got, "a@relay:Bob after")
					}
					if _, open := s.OpenString(); open {
						t.Errorf("chunk %d: a string is still open", chunk)
					}
				}
			})
		}
	}
}

// TestStringCutAtBound: a string that never ends is cut off after
// MaxString bytes (counted after ESC and the string's letter) and the bytes
// after the bound are read as text, however the output is split.
func TestStringCutAtBound(t *testing.T) {
	for _, st := range stringIntros {
		t.Run(st.name, func(t *testing.T) {
			nx := MaxString - (len(st.intro) - 2) - 1
			data := "a" + st.intro + strings.Repeat("x", nx) + "Zafter"
			for _, chunk := range []int{0, 4096, 4093} {
				s := New(40, 3)
				feed(s, []byte(data), chunk)
				// The bound falls on "Z", the last byte of the string.
				if got := s.Line(0).Text; got != "aafter" {
					t.Errorf("chunk %d: row 0 = %q, want %q", chunk, got, "aafter")
				}
			}
			// One byte less: the string is still open, nothing is drawn.
			s := New(40, 3)
			s.Write([]byte("a" + st.intro + strings.Repeat("x", nx) + "Z"))
			if _, open := s.OpenString(); !open || s.Line(0).Text != "a" {
				t.Errorf("at the bound: open %v, row 0 %q; want open, %q", open, s.Line(0).Text, "a")
			}
		})
	}
}

// TestCutString: the scanner's cut ends an open string at once; the
// string is dropped (an OSC is not reported) and text follows. Each string
// started gets a new number.
func TestCutString(t *testing.T) {
	for _, st := range stringIntros {
		t.Run(st.name, func(t *testing.T) {
			var oscs int
			s := NewWithOptions(Options{Cols: 40, Rows: 3, OnOSC: func(int, string) { oscs++ }, OnTitle: func(string) { oscs++ }})
			seq0, _ := s.OpenString()
			s.Write([]byte("a" + st.intro + "data"))
			seq, open := s.OpenString()
			if !open || seq != seq0+1 {
				t.Fatalf("after %q: OpenString = %d, %v; want %d, true", st.intro, seq, open, seq0+1)
			}
			s.CutString()
			if _, open := s.OpenString(); open {
				t.Fatal("string still open after CutString")
			}
			s.Write([]byte("@relay:Bob after"))
			if got := s.Line(0).Text; got != "a@relay:Bob after" || oscs != 0 {
				t.Errorf("row 0 = %q, %d strings reported; want %q, none", got, oscs, "a@relay:Bob after")
			}
			s.CutString() // no string open: nothing happens
			if got := s.Line(0).Text; got != "a@relay:Bob after" {
				t.Errorf("row 0 = %q after a second CutString", got)
			}
		})
	}
}
