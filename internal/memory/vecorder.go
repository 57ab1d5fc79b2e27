package memory

import (
	"cmp"
	"slices"
)

// The index keeps its rows in the order of what the filter reads, not
// in the order the vectors were written: the memories of every scope
// global first, then each workspace's, within one the agent-scoped ones
// apart, by author. A search's filter (a workspace, whose memories and
// the global ones pass; a viewer, whose own agent-scoped ones pass) then
// passes a few long runs of rows instead of one row in four scattered
// over the whole index, and the coarse pass reads them as streams: at
// 1,000,000 vectors it reads 96 MB scattered in 96-byte rows otherwise,
// which costs several times the reading of the same rows in runs.
//
// Rows added since the last ordering (the tail) stay where they were
// appended; when the tail passes an eighth of the rows, the index orders
// them all again. The order changes no result: the coarse pass breaks
// ties by vseq, not by position.

// maybeCluster orders the rows when more than an eighth of them wait in
// the tail (every row, on a load); call with x.mu held.
func (x *vecIndex) maybeCluster() {
	if tail := len(x.vseqs) - x.ordered; tail > 0 && tail >= len(x.vseqs)/8 {
		x.cluster()
	}
}

// cluster orders every row by what the filter reads (see above), the
// dead ones last, each group in vseq order, moving the rows in place.
func (x *vecIndex) cluster() {
	n := len(x.vseqs)
	global := x.strs[string(ScopeGlobal)] // 0 when no row has it
	group := func(k *rowKey) uint32 {
		switch k.scope {
		case 0:
			return ^uint32(0) // dead: last
		case global:
			return 0
		}
		return k.workspace
	}
	perm := make([]int32, n) // row i of the new order is row perm[i] of the old
	for i := range perm {
		perm[i] = int32(i)
	}
	keys := x.keys
	slices.SortFunc(perm, func(a, b int32) int {
		ka, kb := &keys[a], &keys[b]
		return cmp.Or(cmp.Compare(group(ka), group(kb)), cmp.Compare(ka.scope, kb.scope),
			cmp.Compare(ka.author, kb.author), cmp.Compare(x.vseqs[a], x.vseqs[b]))
	})
	x.permute(perm)
	at := make([]int32, n) // old position → new
	for i, p := range perm {
		at[p] = int32(i)
	}
	for id, p := range x.byID {
		x.byID[id] = at[p]
	}
	x.ordered = n
	// The rows each filter passed are positions: gone.
	x.keyGen++
	x.tagGen++
}

// permute moves row perm[i] of every slice of rows to row i, in place:
// cycle by cycle, one row held aside.
func (x *vecIndex) permute(perm []int32) {
	w, d := x.words, x.dims
	code := make([]uint64, w)
	q8 := make([]int8, d)
	done := make([]bool, len(perm))
	for start := range perm {
		if done[start] || int(perm[start]) == start {
			continue
		}
		// Row start aside; then each row of the cycle takes its
		// successor's, the last the one set aside.
		vseq, key, meta, scale, errb := x.vseqs[start], x.keys[start], x.meta[start], x.scale[start], x.errb[start]
		copy(code, x.codes[start*w:(start+1)*w])
		copy(q8, x.q8[start*d:(start+1)*d])
		i := start
		for {
			done[i] = true
			from := int(perm[i])
			if from == start {
				x.vseqs[i], x.keys[i], x.meta[i], x.scale[i], x.errb[i] = vseq, key, meta, scale, errb
				copy(x.codes[i*w:(i+1)*w], code)
				copy(x.q8[i*d:(i+1)*d], q8)
				break
			}
			x.vseqs[i], x.keys[i], x.meta[i], x.scale[i], x.errb[i] = x.vseqs[from], x.keys[from], x.meta[from], x.scale[from], x.errb[from]
			copy(x.codes[i*w:(i+1)*w], x.codes[from*w:(from+1)*w])
			copy(x.q8[i*d:(i+1)*d], x.q8[from*d:(from+1)*d])
			i = from
		}
	}
}
