package memory

import (
	"cmp"
	"encoding/binary"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// maxPasses is how many filters' passing rows the index keeps. A hub's
// searches come from a few agents (each its own viewer) in a few
// workspaces, each with the same filter every time; at 1,000,000 vectors
// one entry is at most 4 MB.
const maxPasses = 8

// passEntry is the index positions, ascending, of the rows that pass
// one filter, of the first upto rows.
type passEntry struct {
	key            string
	keyGen, tagGen uint64
	upto           int
	pos            []int32
	used           uint64
}

// key identifies the filter.
func (mf *memFilter) key() string {
	var b [24]byte
	for i, v := range []uint32{mf.workspace, mf.viewer, mf.author, mf.scope, mf.global, mf.agent} {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return string(b[:]) + strings.Join(mf.tags, "\x00")
}

// passing returns the positions of the rows that pass mf, ascending, in
// a slice the index keeps (valid under x.mu until the next call). The
// filter reads every row once; later searches with the same filter read
// only the rows added since, until a row dies or, for a filter on tags,
// a memory's tags change.
func (x *vecIndex) passing(mf *memFilter) []int32 {
	key := mf.key()
	x.tick++
	var e *passEntry
	for _, c := range x.passes {
		if c.key == key {
			e = c
			break
		}
	}
	if e == nil {
		if len(x.passes) < maxPasses {
			e = &passEntry{}
			x.passes = append(x.passes, e)
		} else {
			e = slices.MinFunc(x.passes, func(a, b *passEntry) int { return int(a.used - b.used) })
		}
		e.key, e.upto, e.pos = key, 0, e.pos[:0]
	}
	tags := len(mf.tags) > 0
	if e.keyGen != x.keyGen || tags && e.tagGen != x.tagGen {
		e.upto, e.pos = 0, e.pos[:0]
	}
	e.keyGen, e.tagGen, e.used = x.keyGen, x.tagGen, x.tick
	total := len(x.keys)
	if e.upto == 0 && cap(e.pos) < total {
		e.pos = make([]int32, 0, total/2)
	}
	keys, meta := x.keys, x.meta
	for i := e.upto; i < total; i++ {
		if mf.passKey(&keys[i]) && (!tags || mf.passTags(&meta[i])) {
			e.pos = append(e.pos, int32(i))
		}
	}
	e.upto = total
	return e.pos
}

// nearest returns the index positions of the n rows passing mf whose
// codes are nearest q by the coarse distance (signQuery; all of them
// when no more than n pass), ascending, in a slice valid until the next
// call.
func (x *vecIndex) nearest(q *signQuery, mf *memFilter, n int) []int32 {
	pass := x.passing(mf)
	count := len(pass)
	x.pos = x.pos[:0]
	if n >= count {
		x.pos = append(x.pos, pass...)
		return x.pos
	}
	if cap(x.dist) < count {
		x.dist = make([]uint16, count+count/4)
	}
	dist := x.dist[:count]
	if len(x.hist) != q.max()+1 {
		x.hist = make([]int32, q.max()+1)
		x.local = nil
	}
	hist := x.hist
	clear(hist)
	procs := runtime.GOMAXPROCS(0)
	for len(x.local) < procs {
		x.local = append(x.local, make([]int32, len(hist)))
	}
	var mu sync.Mutex
	var part atomic.Int32
	parallel(count, 50_000, func(lo, hi int) {
		// Each part counts its distances apart, then adds them in.
		local := x.local[int(part.Add(1)-1)%len(x.local)]
		clear(local)
		d := dist[lo:hi]
		signGather(x.codes, q, pass[lo:hi], d)
		for _, v := range d {
			local[v]++
		}
		mu.Lock()
		for d, c := range local {
			hist[d] += c
		}
		mu.Unlock()
	})
	// The n smallest: those below the distance where the histogram
	// reaches n, and the first of those at it.
	limit, below := 0, 0
	for limit = range hist {
		if below+int(hist[limit]) >= n {
			break
		}
		below += int(hist[limit])
	}
	// Those at it are chosen by vseq, the first written first, so
	// that the window does not depend on the rows' order (vecorder.go).
	lim := uint16(limit)
	ties := x.ties[:0]
	for i, d := range dist {
		switch {
		case d < lim:
			x.pos = append(x.pos, pass[i])
		case d == lim:
			ties = append(ties, pass[i])
		}
	}
	if atLimit := n - below; len(ties) > atLimit {
		slices.SortFunc(ties, func(a, b int32) int { return cmp.Compare(x.vseqs[a], x.vseqs[b]) })
		ties = ties[:atLimit]
		slices.Sort(ties)
	}
	x.ties = ties
	x.pos = mergeSorted(x.pos, ties)
	return x.pos
}

// mergeSorted returns the ascending a and b merged, ascending, in a (its
// capacity grown as needed).
func mergeSorted(a, b []int32) []int32 {
	if len(b) == 0 {
		return a
	}
	n := len(a)
	a = slices.Grow(a, len(b))[:n+len(b)]
	i, j := n-1, len(b)-1
	for k := len(a) - 1; j >= 0; k-- {
		if i >= 0 && a[i] > b[j] {
			a[k] = a[i]
			i--
		} else {
			a[k] = b[j]
			j--
		}
	}
	return a
}
