package screen

import "testing"

// TestCursorRow: the cursor's row splits at the cursor, a prompt keeps its
// trailing space, and a wide character counts once.
func TestCursorRow(t *testing.T) {
	cases := []struct {
		name, in      string
		before, after string
	}{
		{"prompt", "out\r\nbash-5.2$ ", "bash-5.2$ ", ""},
		{"continuation", "bash-5.2$ echo 'a\r\n> ", "> ", ""},
		{"text right of the cursor", "$ git push main\x1b[4D", "$ git push ", "main"},
		{"wide character", "世界> x\x1b[D", "世界> ", "x"},
		{"blank row", "abc\r\n", "", ""},
		{"cursor past the text", "ab\x1b[5C", "ab     ", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(20, 5)
			s.Write([]byte(c.in))
			b, a := s.CursorRow()
			if b != c.before || a != c.after {
				t.Errorf("CursorRow() = %q, %q; want %q, %q", b, a, c.before, c.after)
			}
		})
	}
}
