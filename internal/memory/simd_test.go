package memory

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSIMDMatchesGo checks the assembly loops against the Go ones:
// coarse distances equal (and equal to their definition, dimension by
// dimension), int8 dot products equal up to float32 rounding, for
// lengths around the 8-word and 16-value blocks.
func TestSIMDMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	type gather func(codes []uint64, sq *signQuery, pos []int32, dist []uint16)
	kernels := map[string]gather{"Go": signGatherGo}
	if hasAVX512POPCNT {
		kernels["AVX-512"] = func(codes []uint64, sq *signQuery, pos []int32, dist []uint16) {
			signGatherAVX512(codes, sq.words, sq.planes, pos, dist, sq.levels, sq.base)
		}
	}
	t.Logf("coarse kernels on this CPU: %d", len(kernels))
	for _, dims := range []int{1, 63, 64, 100, 128, 192, 448, 512, 513, 768, 800, 1024, 1090, 5000} {
		w := (dims + 63) / 64
		const rows = 37
		codes := make([]uint64, rows*w)
		vec := make([]float32, dims)
		for row := range rows {
			for i := range vec {
				vec[i] = float32(r.NormFloat64())
			}
			copy(codes[row*w:], signBits(vec))
		}
		q := make([]float32, dims)
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		sq := newSignQuery(unit(q), w)
		var pos []int32
		for i := range int32(rows) {
			if i == rows-1 || r.IntN(3) > 0 { // the last row always: the tail's mask at the end of codes
				pos = append(pos, i)
			}
		}
		for name, k := range kernels {
			got := make([]uint16, len(pos))
			k(codes, sq, pos, got)
			for i, p := range pos {
				if want := signDistanceByDefinition(sq, codes[int(p)*w:(int(p)+1)*w]); int(got[i]) != want {
					t.Fatalf("%s, dims=%d row %d: distance %d, want %d", name, dims, p, got[i], want)
				}
			}
		}
	}
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 48, 63, 64, 65, 80, 100, 127, 128, 768} {
		a := make([]float32, n)
		b := make([]int8, n)
		var sum float64
		for i := range a {
			a[i] = float32(r.NormFloat64())
			b[i] = int8(r.IntN(255) - 127)
			sum += math.Abs(float64(a[i]) * float64(b[i]))
		}
		want := dotQ8Go(a, b)
		dots := map[string]func(a []float32, b []int8) float32{"dotQ8": dotQ8}
		if m := n &^ 15; hasAVX2FMA {
			dots["AVX2"] = func(a []float32, b []int8) float32 { return dotQ8AVX2(a[:m], b[:m]) + dotQ8Go(a[m:], b[m:]) }
		}
		if m := n &^ 15; hasAVX512FMA {
			dots["AVX-512"] = func(a []float32, b []int8) float32 { return dotQ8AVX512(a[:m], b[:m]) + dotQ8Go(a[m:], b[m:]) }
		}
		for name, dot := range dots {
			if got := dot(a, b); math.Abs(float64(got)-float64(want)) > 1e-5*max(sum, 1) {
				t.Fatalf("%s, n=%d: dot %v, Go %v", name, n, got, want)
			}
		}
	}
}

// signDistanceByDefinition is signQuery's distance from code c, summed
// dimension by dimension: levels − u where the sign bit is set, u where
// it is not.
func signDistanceByDefinition(sq *signQuery, c []uint64) int {
	d := 0
	for i := range sq.dims {
		u := 0
		for k := range 4 {
			u |= int(sq.planes[k*sq.words+i/64]>>(i%64)&1) << k
		}
		if c[i/64]>>(i%64)&1 == 1 {
			d += sq.levels - u
		} else {
			d += u
		}
	}
	return d
}

// TestKthLargest checks the selection that picks the shortlist's floor
// against sorting, on random, repeated and sorted values.
func TestKthLargest(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for round := range 2000 {
		n := 1 + r.IntN(300)
		xs := make([]float64, n)
		for i := range xs {
			switch round % 4 {
			case 0:
				xs[i] = r.Float64()
			case 1:
				xs[i] = float64(r.IntN(5)) // many equal
			case 2:
				xs[i] = float64(i) // sorted
			default:
				xs[i] = float64(n - i) // reversed
			}
		}
		k := 1 + r.IntN(n)
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		if got, want := kthLargest(xs, k), sorted[n-k]; got != want {
			t.Fatalf("round %d: kthLargest(n=%d, k=%d) = %v, want %v", round, n, k, got, want)
		}
	}
}
