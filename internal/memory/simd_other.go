//go:build !amd64

package memory

const (
	hasPOPCNT       = false
	hasAVX512POPCNT = false
	hasAVX2FMA      = false
	hasAVX512FMA    = false
)

func hammingGatherPOPCNT(codes []uint64, w int, q []uint64, pos []int32, dist []uint16) {
	panic("unreachable")
}

func hammingGatherAVX512(codes []uint64, w int, q []uint64, pos []int32, dist []uint16) {
	panic("unreachable")
}

func dotQ8AVX2(a []float32, b []int8) float32 { panic("unreachable") }

func dotQ8AVX512(a []float32, b []int8) float32 { panic("unreachable") }
