package scanner

import (
	"testing"
	"time"
)

// BenchmarkSpinnerFrame is one frame of a status row redrawn in place
// (churn) on a settled screen: what a wrapper pays for each of a
// spinner's frames in the scanner (issue 34).
func BenchmarkSpinnerFrame(b *testing.B) {
	for _, profile := range []string{"generic", "claude"} {
		b.Run(profile, func(b *testing.B) {
			h := newHarness(&testing.T{}, 120, 40, profile)
			h.write("❯ refactor the parser and run the tests\r\n\r\n● I'll start by reading the parser.\r\n\r\n")
			frames := make([][]byte, 60)
			for i := range frames {
				frames[i] = []byte(spinnerFrame(i))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				h.clk.advance(80 * time.Millisecond)
				h.s.Write(frames[i%len(frames)])
			}
		})
	}
}
