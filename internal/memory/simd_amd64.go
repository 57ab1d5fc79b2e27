package memory

import "golang.org/x/sys/cpu"

// The CPU features the index's inner loops use when present (in
// simd_amd64.s): POPCNT for Hamming distances, AVX2 and FMA for the int8
// dot products. Without them the portable loops run.
var (
	hasPOPCNT  = cpu.X86.HasPOPCNT
	hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA
)

// hammingRowsPOPCNT sets dist[i] to the Hamming distance of q[:w] and
// codes[i*w:(i+1)*w]. It needs w ≥ 1, len(q) ≥ w and len(codes) ≥
// len(dist)·w (hammingRows checks).
//
//go:noescape
func hammingRowsPOPCNT(codes []uint64, w int, q []uint64, dist []uint16)

// dotQ8AVX2 is dotQ8 for len(b) a multiple of 16 and len(a) ≥ len(b)
// (dotQ8 checks), summing in eight lanes.
//
//go:noescape
func dotQ8AVX2(a []float32, b []int8) float32
