package memory

import (
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// termBits is the set of memories that hold one term, for every seq up
// to horizon: a compressed bitmap (roaring: sorted 16-bit arrays where
// the term is rare in a block of 65,536 seqs, plain bitmaps where it is
// common, about 2 bytes a match for most terms). Searches AND the sets in
// memory instead of asking FTS5, whose AND of two terms decodes both
// posting lists with their positions (0.5–5 ms at a million memories
// for terms a few thousand memories hold).
//
// roaring was chosen over a hand-made bitmap and sorted list (what this
// was before): the same speed for the common terms, a third of the memory
// for the rest, so that every term a hub is asked about fits the budget
// (lexMaxBytes) at a million memories.
type termBits struct {
	bm      *roaring.Bitmap
	horizon int64
	used    uint64
}

// maxSetSeq is the largest seq a set holds: sets are 32-bit. A store
// whose seqs pass it (four billion saves) searches through FTS5 alone.
const maxSetSeq = math.MaxUint32

// headSet is the set of head, the newest matches of a term, when head is
// every match up to maxSeq.
func headSet(head []int64, maxSeq int64) *termBits {
	b := &termBits{bm: roaring.New()}
	b.add(head, maxSeq)
	return b
}

func (b *termBits) has(seq int64) bool {
	return b.bm != nil && seq >= 0 && seq <= maxSetSeq && b.bm.Contains(uint32(seq))
}

// size is the memory b holds, in bytes.
func (b *termBits) size() int64 {
	if b.bm == nil {
		return 0
	}
	return int64(b.bm.GetSizeInBytes())
}

// add puts seqs (after b.horizon, in any order) in b and moves its
// horizon to maxSeq.
func (b *termBits) add(seqs []int64, maxSeq int64) {
	if b.bm == nil {
		b.bm = roaring.New()
	}
	s := make([]uint32, len(seqs))
	for i, seq := range seqs {
		s[i] = uint32(seq)
	}
	slices.Sort(s)
	b.bm.AddMany(s)
	b.horizon = maxSeq
}

// andNewest returns a function that yields, newest first, the seqs up to
// maxSeq that every set holds, and false once there are no more.
func andNewest(sets []*termBits, maxSeq int64) func() (int64, bool) {
	var bm *roaring.Bitmap
	if len(sets) == 1 {
		bm = sets[0].bm
	} else {
		bms := make([]*roaring.Bitmap, len(sets))
		for i, b := range sets {
			bms[i] = b.bm
		}
		bm = roaring.FastAnd(bms...)
	}
	it := bm.ReverseIterator()
	return func() (int64, bool) {
		for it.HasNext() {
			if seq := int64(it.Next()); seq <= maxSeq {
				return seq, true
			}
		}
		return 0, false
	}
}

// newest returns the newest n seqs up to maxSeq that b holds and keep
// says are memories, newest first.
func (b *termBits) newest(n int, maxSeq int64, keep func(seq int64) bool) []int64 {
	out := make([]int64, 0, n)
	it := b.bm.ReverseIterator()
	for len(out) < n && it.HasNext() {
		if seq := int64(it.Next()); seq <= maxSeq && keep(seq) {
			out = append(out, seq)
		}
	}
	return out
}
