package memory

import "golang.org/x/sys/cpu"

// The CPU features the index's inner loops use when present (in
// simd_amd64.s): AVX-512's VPOPCNTQ for the coarse pass's distances
// (signquery.go); AVX-512, else AVX2 and FMA, for the int8 dot products.
// Without them the portable loops run.
var (
	hasAVX512POPCNT = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VPOPCNTDQ
	hasAVX2FMA      = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512FMA    = cpu.X86.HasAVX512F
)

// signGatherAVX512 is signGather's loop: dist[i] the distance of the
// query (planes, levels, base: signQuery) from codes[pos[i]*w:(pos[i]+1)*w].
// It needs w ≥ 1, len(planes) ≥ 4w, len(dist) ≥ len(pos) and every row
// in codes (signGather checks).
//
//go:noescape
func signGatherAVX512(codes []uint64, w int, planes []uint64, pos []int32, dist []uint16, levels, base int)

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

// prefetchRange asks the CPU to bring the n bytes at p into its cache
// (PREFETCHT0), without waiting for them: a hint, which never faults.
//
//go:noescape
func prefetchRange(p *int8, n int)
