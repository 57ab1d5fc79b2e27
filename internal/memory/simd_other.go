//go:build !amd64

package memory

const (
	hasAVX512POPCNT = false
	hasAVX2FMA      = false
	hasAVX512FMA    = false
)

func signGatherAVX512(codes []uint64, w int, planes []uint64, pos []int32, dist []uint16, levels, base int) {
	panic("unreachable")
}

func dotQ8AVX2(a []float32, b []int8) float32 { panic("unreachable") }

func dotQ8AVX512(a []float32, b []int8) float32 { panic("unreachable") }

func prefetchRange(p *int8, n int) {}
