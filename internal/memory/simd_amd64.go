package memory

import "golang.org/x/sys/cpu"

// The CPU features the index's inner loops use when present (in
// simd_amd64.s): AVX-512's VPOPCNTQ, else POPCNT, for Hamming distances;
// AVX-512, else AVX2 and FMA, for the int8 dot products. Without them the portable loops
// run.
var (
	hasPOPCNT       = cpu.X86.HasPOPCNT
	hasAVX512POPCNT = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VPOPCNTDQ
	hasAVX2FMA      = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512FMA    = cpu.X86.HasAVX512F
)

// hammingGatherPOPCNT and hammingGatherAVX512 set dist[i] to the Hamming
// distance of q[:w] and codes[pos[i]*w:(pos[i]+1)*w]. They need w ≥ 1,
// len(q) ≥ w, len(dist) ≥ len(pos) and every row in codes
// (hammingGather checks).
//
//go:noescape
func hammingGatherPOPCNT(codes []uint64, w int, q []uint64, pos []int32, dist []uint16)

//go:noescape
func hammingGatherAVX512(codes []uint64, w int, q []uint64, pos []int32, dist []uint16)

// dotQ8AVX2 is dotQ8 for len(b) a multiple of 16 and len(a) ≥ len(b)
// (dotQ8 checks), summing in eight lanes.
//
//go:noescape
func dotQ8AVX2(a []float32, b []int8) float32

// dotQ8AVX512 is dotQ8 for len(b) a multiple of 16 and len(a) ≥ len(b)
// (dotQ8 checks), summing in sixteen lanes, four sums when it can.
//
//go:noescape
func dotQ8AVX512(a []float32, b []int8) float32
