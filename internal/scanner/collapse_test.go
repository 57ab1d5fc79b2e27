package scanner

import (
	"strings"
	"testing"
)

// collapseRef is what collapse must return.
func collapseRef(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestCollapse(t *testing.T) {
	for _, s := range []string{
		"", " ", "a", " a", "a ", "a b", "a  b", "a\tb", "a\r\nb", "  @relay:Bob  hi  ",
		"✦ @relay:Bob sentinel", "a\u00a0b", "a\u0085b", "a\u2003\u2003b", "\u3000",
		"bad \xff byte", "\xff", "a \xc2", "a\u200bb", // a zero-width space is not white space
	} {
		if got, want := collapse(s), collapseRef(s); got != want {
			t.Errorf("collapse(%q) = %q, want %q", s, got, want)
		}
	}
}

// A collapsed text comes back as it is, without a copy.
func TestCollapseDoesNotAllocate(t *testing.T) {
	row := "✦ @relay:Bob the resumed session still reaches you, read off the screen."
	if n := testing.AllocsPerRun(100, func() { _ = collapse(row) }); n != 0 {
		t.Errorf("collapse of a collapsed row allocates %v times, want 0", n)
	}
}

func FuzzCollapse(f *testing.F) {
	for _, s := range []string{"", " a  b ", "a\u00a0b", "\xff \xfe", "x\t\ny"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := collapse(s), collapseRef(s); got != want {
			t.Fatalf("collapse(%q) = %q, want %q", s, got, want)
		}
	})
}
