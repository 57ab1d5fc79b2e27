package memory

import (
	"math"
	"math/bits"
)

// signQuery is a query as the coarse pass compares it with the index's
// sign codes: asymmetrically, the query's values kept (to four bits) and
// only the stored vectors reduced to their signs.
//
// Hamming distance reduces both sides to signs. Keeping the query's
// values weighs each dimension by how much the query leans on it, which
// finds the nearest vectors from the same 96 bytes a row far better: on
// the benchmark's 100,000 memories, the brute-force ten best were within
// the 2,048 nearest by Hamming distance 97.7% of the time, by this
// distance every time (their rank's 99th percentile 4,346 by Hamming,
// about 500 by this).
//
// Each value of the query becomes a level u in [0, levels]: the value
// clipped to ±2.5 times the values' root mean square (the peak, if
// lower), then scaled. The distance of a row with sign bits b is
//
//	Σ_i b_i·(levels − u_i) + (1 − b_i)·u_i
//
// (a dimension costs how far the query's level is from the end the row's
// sign points to), which is base + levels·popcount(b) − 2·Σ_k 2^k·
// popcount(b AND plane_k), plane_k holding bit k of every u_i: five
// population counts a word of the code. With levels = 15 and 768
// dimensions it is at most 11,520, and the selection's histogram has a
// bin per value.
type signQuery struct {
	planes []uint64 // 4 planes of words uint64s: plane k, word j at k·words+j
	levels int      // the highest level: 15, less for more than 4,369 dimensions
	base   int      // Σ u_i
	words  int
	dims   int
}

// signClip is where a query's values are clipped, in root mean squares:
// four bits then cover what matters of a Gaussian-like spread.
const signClip = 2.5

// newSignQuery is q as the coarse pass compares it with codes of words
// uint64s (len(q) ≤ 64·words).
func newSignQuery(q []float32, words int) *signQuery {
	levels := min(15, math.MaxUint16/max(1, len(q)))
	sq := &signQuery{planes: make([]uint64, 4*words), levels: levels, words: words, dims: len(q)}
	var sum, peak float64
	for _, v := range q {
		sum += float64(v) * float64(v)
		peak = max(peak, math.Abs(float64(v)))
	}
	clip := peak
	if len(q) > 0 {
		clip = min(peak, signClip*math.Sqrt(sum/float64(len(q))))
	}
	if clip == 0 {
		clip = 1 // all zeros: every level in the middle
	}
	for i, v := range q {
		x := max(-clip, min(clip, float64(v)))
		u := int(math.Round((x + clip) / (2 * clip) * float64(levels)))
		sq.base += u
		for k := range 4 {
			if u>>k&1 == 1 {
				sq.planes[k*words+i/64] |= 1 << (i % 64)
			}
		}
	}
	return sq
}

// max is the largest distance: every dimension at the far end.
func (sq *signQuery) max() int { return sq.levels * sq.dims }

// distance is the distance of q from the code c (words uint64s).
func (sq *signQuery) distance(c []uint64) int {
	w := sq.words
	p := sq.planes
	var pc, u int
	for j, x := range c[:w] {
		pc += bits.OnesCount64(x)
		u += bits.OnesCount64(x&p[j]) + 2*bits.OnesCount64(x&p[w+j]) +
			4*bits.OnesCount64(x&p[2*w+j]) + 8*bits.OnesCount64(x&p[3*w+j])
	}
	return sq.base + sq.levels*pc - 2*u
}

// signGather sets dist[i] to the distance of sq from the code of words
// uint64s at row pos[i] of codes: with AVX-512's VPOPCNTQ where the CPU
// has it. pos must be ascending.
func signGather(codes []uint64, sq *signQuery, pos []int32, dist []uint16) {
	w := sq.words
	if w < 1 || len(sq.planes) < 4*w || len(dist) < len(pos) {
		panic("memory: signGather: lengths do not match")
	}
	if len(pos) == 0 {
		return
	}
	if pos[0] < 0 || (int(pos[len(pos)-1])+1)*w > len(codes) {
		panic("memory: signGather: a row out of range")
	}
	if hasAVX512POPCNT {
		signGatherAVX512(codes, w, sq.planes, pos, dist, sq.levels, sq.base)
		return
	}
	signGatherGo(codes, sq, pos, dist)
}

func signGatherGo(codes []uint64, sq *signQuery, pos []int32, dist []uint16) {
	w := sq.words
	for i, p := range pos {
		o := int(p) * w
		dist[i] = uint16(sq.distance(codes[o : o+w : o+w]))
	}
}
