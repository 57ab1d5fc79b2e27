package memory

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSIMDMatchesGo checks the assembly loops against the Go ones:
// Hamming distances equal, int8 dot products equal up to float32
// rounding, for lengths around the 16-value blocks.
func TestSIMDMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, w := range []int{1, 2, 3, 12, 13} {
		const rows = 37
		codes := make([]uint64, rows*w)
		for i := range codes {
			codes[i] = r.Uint64()
		}
		q := make([]uint64, w)
		for i := range q {
			q[i] = r.Uint64()
		}
		got := make([]uint16, rows)
		hammingRows(codes, w, q, got)
		for i := range rows {
			if want := hamming(codes[i*w:(i+1)*w], q); int(got[i]) != want {
				t.Fatalf("w=%d row %d: distance %d, want %d", w, i, got[i], want)
			}
		}
	}
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 100, 768} {
		a := make([]float32, n)
		b := make([]int8, n)
		var sum float64
		for i := range a {
			a[i] = float32(r.NormFloat64())
			b[i] = int8(r.IntN(255) - 127)
			sum += math.Abs(float64(a[i]) * float64(b[i]))
		}
		got, want := dotQ8(a, b), dotQ8Go(a, b)
		if d := math.Abs(float64(got) - float64(want)); d > 1e-5*max(sum, 1) {
			t.Fatalf("n=%d: dot %v, Go %v", n, got, want)
		}
	}
}
