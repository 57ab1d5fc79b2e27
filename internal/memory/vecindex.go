package memory

import (
	"context"
	"database/sql"
	"encoding/binary"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// vecIndex is a process's in-memory copy of the vectors and of what the
// search filters on, each kind in one contiguous slice:
//
//   - meta: each vector's memory (seq, update time, author, workspace,
//     scope, tags), so that the filter is applied before anything is
//     ranked;
//   - codes: one bit per dimension, the sign (96 bytes for 768
//     dimensions), for the coarse pass (signQuery's distance);
//   - q8: the vector quantised to int8 (one byte per dimension) with its
//     scale and a bound of its quantisation error, for the second pass,
//     which ranks the coarse pass's window by approximate cosine and tells
//     which vectors could still be among the best.
//
// The file holds the codes and int8 copies beside the float32 vectors
// (written with them), so loading reads about a quarter of the bytes of
// the vectors; the float32 vectors stay in the file, and the search reads
// only those it must rank exactly. The index reads the vectors written since it last
// looked (vseq only grows) and the memories changed since (an update gives
// a memory a new seq); a vector replaced leaves a dead entry, which,
// past a quarter of the file's vectors, makes it reload, as a deletion of
// a memory does (memories_deletes counts them).
type vecIndex struct {
	mu      sync.Mutex
	model   string
	dims    int
	words   int // uint64s per code
	vseqs   []int64
	keys    []rowKey
	meta    []rowMeta
	codes   []uint64
	q8      []int8
	scale   []float32
	errb    []float32 // |v − scale·q8|, rounded up
	ordered int       // rows [0, ordered) are in the filter's order (vecorder.go)
	last    int64     // the last vseq read
	lastSeq int64     // the last memory seq read
	seen    [4]int64  // what refresh's state query gave when it last read
	// watch is a connection of the index's own that never writes: its
	// PRAGMA data_version changes when any other connection, of this
	// process or another, commits. version is what it gave when the index
	// last read; versionOK that the index is up to date with it.
	watch     *sql.Conn
	version   int64
	versionOK bool
	deletes   int64
	byID      map[string]int32 // memory id → its live position
	strs      map[string]uint32
	window    int // the window; 0 means semWindow (tests set less)

	reads atomic.Int64 // vectors read from the file to rank exactly, in all

	// What passes recent filters (vecscan.go), valid while keyGen (a
	// row's key changed: it died, or the index was reset) and, for a
	// filter on tags, tagGen (a row's tags changed) stay as they were;
	// rows appended since are filtered on the next use.
	keyGen, tagGen uint64
	passes         []*passEntry
	tick           uint64

	// Scratch space kept between searches (under mu), so that a search
	// allocates little.
	dist  []uint16
	hist  []int32
	local [][]int32 // each core's histogram
	pos   []int32
	ties  []int32
	cands []cand
	lows  []float64
}

// rowKey is what the filter reads of every vector's memory, kept apart
// from the rest so that the scan reads 12 bytes a row. Strings are
// interned (vecIndex.intern); a scope of 0 marks a dead entry.
type rowKey struct {
	author, workspace, scope uint32
}

// rowMeta is the rest of what the filter and the results need of a
// vector's memory.
type rowMeta struct {
	seq, updated int64
	tags         string // " a b ", as the filter's instr reads them
}

func (x *vecIndex) intern(s string) uint32 {
	if id, ok := x.strs[s]; ok {
		return id
	}
	if x.strs == nil {
		x.strs = map[string]uint32{}
	}
	id := uint32(len(x.strs) + 1)
	x.strs[s] = id
	return id
}

func (x *vecIndex) reset(model string) {
	x.model, x.dims, x.words, x.last, x.lastSeq, x.ordered = model, 0, 0, 0, 0, 0
	x.vseqs, x.keys, x.meta, x.codes, x.q8, x.scale, x.errb = nil, nil, nil, nil, nil, nil, nil
	x.byID, x.strs, x.seen = map[string]int32{}, nil, [4]int64{}
	x.passes = nil
	x.keyGen++
	x.tagGen++
}

// refresh loads the vectors of model written, and the memories changed,
// since the last call, in one read transaction.
//
// Nothing is read when the file's data_version is what it was at the
// last read (no commit since, of any connection or process): a search
// then costs one PRAGMA, not a query of four tables. Else one query tells
// whether anything the index holds changed: the counts of vectors and of
// deletions, the last vseq and the last memory seq (a save, a re-save, a
// new vector or a deletion changes one of them).
func (x *vecIndex) refresh(ctx context.Context, s *Store, model string) error {
	version, err := x.dataVersion(ctx, s.db)
	if err == nil && x.versionOK && version == x.version && x.model == model && x.byID != nil {
		return nil
	}
	x.versionOK = false
	if err := x.read(ctx, s, model); err != nil {
		return err
	}
	// Read before the index: a commit since is seen by the next search.
	x.version, x.versionOK = version, err == nil
	return nil
}

// dataVersion returns PRAGMA data_version on the index's own connection
// (opened on first use); call with mu held.
func (x *vecIndex) dataVersion(ctx context.Context, db *sql.DB) (int64, error) {
	if x.watch == nil {
		c, err := db.Conn(ctx)
		if err != nil {
			return 0, err
		}
		x.watch = c
	}
	var v int64
	if err := x.watch.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		x.watch.Close() // opened again on the next call
		x.watch = nil
		return 0, err
	}
	return v, nil
}

// close returns the index's connection to the pool.
func (x *vecIndex) close() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.watch != nil {
		x.watch.Close()
		x.watch = nil
	}
	x.versionOK = false
}

// read loads what changed since the last read, in one read transaction.
func (x *vecIndex) read(ctx context.Context, s *Store, model string) error {
	const state = `SELECT (SELECT n FROM vectors_count), (SELECT n FROM memories_deletes),
		coalesce((SELECT max(vseq) FROM vectors), 0), coalesce((SELECT max(seq) FROM memories), 0)`
	var now [4]int64
	if err := s.db.QueryRowContext(ctx, state).Scan(&now[0], &now[1], &now[2], &now[3]); err != nil {
		return err
	}
	if x.model == model && x.byID != nil && now == x.seen {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, state).Scan(&now[0], &now[1], &now[2], &now[3]); err != nil {
		return err
	}
	n, dels := now[0], now[1]
	if x.model != model || x.deletes != dels || int64(len(x.vseqs)) > n+n/4+16 || x.byID == nil {
		x.reset(model)
		x.deletes = dels
	}
	since := x.lastSeq
	rows, err := tx.QueryContext(ctx, `SELECT v.vseq, v.id, v.bits, q.q8, q.scale, q.errb,
			m.seq, m.updated_ms, m.author, m.workspace, m.scope, m.tags
		FROM vectors v CROSS JOIN vectors_q8 q ON q.vseq = v.vseq CROSS JOIN memories m ON m.id = v.id
		WHERE v.vseq > ? AND v.model = ? ORDER BY v.vseq`, x.last, model)
	if err != nil {
		return err
	}
	defer rows.Close()
	var code, q8 sql.RawBytes // valid until the next row: copied below
	for rows.Next() {
		var vseq int64
		var id, author, workspace, scope, tags string
		var scale, errb float64
		var m rowMeta
		var k rowKey
		if err := rows.Scan(&vseq, &id, &code, &q8, &scale, &errb, &m.seq, &m.updated, &author, &workspace, &scope, &tags); err != nil {
			return err
		}
		x.last = vseq
		if x.dims == 0 && len(q8) > 0 {
			x.dims, x.words = len(q8), len(code)/8
			// Room for every vector at once: growing by doubling would
			// hold two copies for a moment.
			x.grow(int(n) - len(x.vseqs))
		}
		if len(q8) != x.dims || len(code) != 8*x.words || x.dims == 0 {
			continue // another length: not comparable
		}
		if old, ok := x.byID[id]; ok {
			x.keys[old].scope = 0
			x.keyGen++
		}
		k.author, k.workspace, k.scope, m.tags = x.intern(author), x.intern(workspace), x.intern(scope), " "+tags+" "
		x.lastSeq = max(x.lastSeq, m.seq)
		x.byID[id] = int32(len(x.vseqs))
		x.vseqs = append(x.vseqs, vseq)
		x.keys = append(x.keys, k)
		x.meta = append(x.meta, m)
		for i := range x.words {
			x.codes = append(x.codes, binary.LittleEndian.Uint64(code[8*i:]))
		}
		for _, c := range q8 {
			x.q8 = append(x.q8, int8(c))
		}
		x.scale = append(x.scale, float32(scale))
		x.errb = append(x.errb, float32(errb))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	// Memories saved again since: their new seq, time and tags.
	rows, err = tx.QueryContext(ctx, `SELECT id, seq, updated_ms, tags FROM memories WHERE seq > ?`, since)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, tags string
		var seq, updated int64
		if err := rows.Scan(&id, &seq, &updated, &tags); err != nil {
			return err
		}
		x.lastSeq = max(x.lastSeq, seq)
		if p, ok := x.byID[id]; ok {
			m := &x.meta[p]
			if t := " " + tags + " "; t != m.tags {
				m.tags = t
				x.tagGen++
			}
			m.seq, m.updated = seq, updated
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	x.seen = now
	x.maybeCluster()
	return nil
}

// memFilter is a Filter over the index's rows: the same rule as
// Filter.where.
type memFilter struct {
	workspace, viewer, author, scope uint32 // 0: not asked for
	global, agent                    uint32
	tags                             []string // " tag "
}

func (x *vecIndex) filter(f Filter) memFilter {
	var mf memFilter
	look := func(s string) uint32 {
		if s == "" {
			return 0
		}
		if id, ok := x.strs[s]; ok {
			return id
		}
		return ^uint32(0) // matches no row
	}
	mf.workspace, mf.viewer, mf.author, mf.scope = look(f.Workspace), look(f.Viewer), look(f.Author), look(string(f.Scope))
	mf.global, mf.agent = look(string(ScopeGlobal)), look(string(ScopeAgent))
	for _, t := range NormalizeTags(f.Tags) {
		mf.tags = append(mf.tags, " "+t+" ")
	}
	return mf
}

// passKey is the filter without its tags.
func (mf *memFilter) passKey(k *rowKey) bool {
	return k.scope != 0 &&
		(mf.workspace == 0 || k.workspace == mf.workspace || k.scope == mf.global) &&
		(mf.viewer == 0 || k.scope != mf.agent || k.author == mf.viewer) &&
		(mf.author == 0 || k.author == mf.author) &&
		(mf.scope == 0 || k.scope == mf.scope)
}

// passTags is the filter's tags.
func (mf *memFilter) passTags(m *rowMeta) bool {
	for _, t := range mf.tags {
		if !strings.Contains(m.tags, t) {
			return false
		}
	}
	return true
}

// grow makes room for n more vectors.
func (x *vecIndex) grow(n int) {
	if n <= 0 {
		return
	}
	x.vseqs = slices.Grow(x.vseqs, n)
	x.keys = slices.Grow(x.keys, n)
	x.meta = slices.Grow(x.meta, n)
	x.codes = slices.Grow(x.codes, n*x.words)
	x.q8 = slices.Grow(x.q8, n*x.dims)
	x.scale = slices.Grow(x.scale, n)
	x.errb = slices.Grow(x.errb, n)
}

// boundSlack covers float32 rounding: of the approximate cosines (four
// float32 sums of products of a unit vector's values and int8s), of the
// exact ones (a float32 sum of products of values at most 1) and of the
// bounds themselves.
const boundSlack = 3e-4

// bound is the error bound of approx for a unit query and the vector at
// index position p: q·v − scale·(q·c) = q·(v − scale·c), at most the
// residual's length.
func (x *vecIndex) bound(p int32) float64 {
	return float64(x.errb[p]) + boundSlack
}

// approx is the approximate cosine of the unit query q and the vector at
// index position p: exact up to x.bound(p).
func (x *vecIndex) approx(q []float32, p int32) float64 {
	d := x.dims
	off := int(p) * d
	return float64(x.scale[p]) * float64(dotQ8(q, x.q8[off:off+d]))
}

// dotQ8 is the dot product of a float32 and an int8 vector of the same
// length: with AVX-512 in sixteen lanes, or AVX2 in eight, else dotQ8Go.
func dotQ8(a []float32, b []int8) float32 {
	n := min(len(a), len(b)) &^ 15
	switch {
	case n == 0:
		return dotQ8Go(a, b)
	case hasAVX512FMA:
		return dotQ8AVX512(a[:n], b[:n]) + dotQ8Go(a[n:], b[n:])
	case hasAVX2FMA:
		return dotQ8AVX2(a[:n], b[:n]) + dotQ8Go(a[n:], b[n:])
	}
	return dotQ8Go(a, b)
}

// dotQ8Go is dotQ8 in Go. Eight products per round into four sums: the
// compiler keeps it free of bounds checks.
func dotQ8Go(a []float32, b []int8) float32 {
	var s0, s1, s2, s3 float32
	for len(a) >= 8 && len(b) >= 8 {
		x, y := a[:8:8], b[:8:8]
		s0 += x[0]*float32(y[0]) + x[4]*float32(y[4])
		s1 += x[1]*float32(y[1]) + x[5]*float32(y[5])
		s2 += x[2]*float32(y[2]) + x[6]*float32(y[6])
		s3 += x[3]*float32(y[3]) + x[7]*float32(y[7])
		a, b = a[8:], b[8:]
	}
	for i := range min(len(a), len(b)) {
		s0 += a[i] * float32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// parallel runs work over [0, n) in GOMAXPROCS chunks when n is at least
// minPar, else in the caller's goroutine.
func parallel(n, minPar int, work func(lo, hi int)) {
	procs := runtime.GOMAXPROCS(0)
	if n < minPar || procs < 2 {
		work(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + procs - 1) / procs
	for lo := chunk; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) { defer wg.Done(); work(lo, hi) }(lo, min(lo+chunk, n))
	}
	work(0, min(chunk, n))
	wg.Wait()
}
