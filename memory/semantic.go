package memory

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// How semantic search reads a large store. It keeps, in memory, one bit
// per dimension of each vector (its sign: 96 bytes for 768 dimensions) and
// finds the semWindow codes nearest the query's by Hamming distance; only
// those vectors are read from the file and ranked by exact cosine
// similarity. When the filters leave fewer than the limit, the window
// grows eightfold, up to every vector. Up to fullScan vectors the file's
// vectors are all ranked exactly.
const (
	semWindow = 256
	fullScan  = 2000
)

// vecIndex is a process's in-memory copy of the vectors' sign codes. It
// reads the rows written since it last looked (vseq only grows); rows
// replaced or deleted leave stale entries, which searches skip and which,
// past a quarter of the file's vectors, make it reload.
type vecIndex struct {
	mu    sync.Mutex
	model string
	words int // uint64s per code
	vseqs []int64
	codes []uint64
	last  int64
	dist  []uint16 // nearest's scratch space, kept between searches
}

// refresh loads the rows of model written since the last call.
func (x *vecIndex) refresh(ctx context.Context, s *Store, model string) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT n FROM vectors_count`).Scan(&n); err != nil {
		return err
	}
	if x.model != model || len(x.vseqs) > n+n/4+16 {
		x.model, x.words, x.vseqs, x.codes, x.last = model, 0, nil, nil, 0
	}
	rows, err := s.db.QueryContext(ctx, `SELECT vseq, bits FROM vectors WHERE vseq > ? AND model = ? ORDER BY vseq`, x.last, model)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var vseq int64
		var b []byte
		if err := rows.Scan(&vseq, &b); err != nil {
			return err
		}
		x.last = vseq
		if x.words == 0 {
			x.words = len(b) / 8
		}
		if len(b) != 8*x.words {
			continue // another length: not comparable
		}
		x.vseqs = append(x.vseqs, vseq)
		for i := range x.words {
			x.codes = append(x.codes, binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	return rows.Err()
}

// nearest returns the vseqs of the n codes nearest q by Hamming distance.
func (x *vecIndex) nearest(q []uint64, n int) []int64 {
	total := len(x.vseqs)
	if n >= total {
		return slices.Clone(x.vseqs)
	}
	if cap(x.dist) < total {
		x.dist = make([]uint16, total+total/4)
	}
	dist := x.dist[:total]
	w := x.words
	part := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			c := x.codes[i*w : i*w+w]
			d := 0
			for j, y := range c {
				d += bits.OnesCount64(y ^ q[j])
			}
			dist[i] = uint16(d)
		}
	}
	if procs := runtime.GOMAXPROCS(0); total >= 50_000 && procs > 1 {
		var wg sync.WaitGroup
		chunk := (total + procs - 1) / procs
		for lo := 0; lo < total; lo += chunk {
			wg.Add(1)
			go func(lo, hi int) { defer wg.Done(); part(lo, hi) }(lo, min(lo+chunk, total))
		}
		wg.Wait()
	} else {
		part(0, total)
	}
	// The n smallest by a histogram of the distances.
	hist := make([]int, 64*w+1)
	for _, d := range dist {
		hist[d]++
	}
	limit, count := 0, 0
	for limit = range hist {
		if count+hist[limit] >= n {
			break
		}
		count += hist[limit]
	}
	out := make([]int64, 0, n)
	atLimit := n - count
	for i, d := range dist {
		switch {
		case int(d) < limit:
			out = append(out, x.vseqs[i])
		case int(d) == limit && atLimit > 0:
			out = append(out, x.vseqs[i])
			atLimit--
		}
	}
	return out
}

// hit is one memory found by meaning.
type hit struct {
	seq     int64
	updated int64
	cos     float64
}

// semantic returns up to limit memories passing f, most similar to the
// unit vector q first, with a cosine similarity above zero.
func (s *Store) semantic(ctx context.Context, q []float32, f Filter, limit int) ([]hit, error) {
	model := s.opts.Embedder.Model()
	x := s.index
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.refresh(ctx, s, model); err != nil {
		return nil, err
	}
	where, args := f.where()
	code := signBits(q)
	window := max(semWindow, 4*limit)
	for {
		var out []hit
		var err error
		all := len(x.vseqs) <= max(window, fullScan)
		if all {
			out, err = s.rank(ctx, q, `v.model = ? AND `+where, append([]any{model}, args...), -1)
		} else {
			near := x.nearest(code, window)
			in := make([]any, len(near))
			for i, v := range near {
				in[i] = v
			}
			out, err = s.rank(ctx, q, `v.vseq IN (`+strings.Repeat("?,", len(near)-1)+`?) AND `+where, append(in, args...), len(near))
		}
		if err != nil {
			return nil, err
		}
		if len(out) >= limit || all {
			slices.SortFunc(out, func(a, b hit) int {
				if c := cmp.Compare(b.cos, a.cos); c != 0 {
					return c
				}
				return cmp.Compare(b.seq, a.seq)
			})
			return out[:min(limit, len(out))], nil
		}
		window *= 8
	}
}

// rank reads the vectors matching cond and scores them against q. asked
// is how many vseqs cond names (-1 for a scan): those not found are stale
// entries of the index, or filtered out.
func (s *Store) rank(ctx context.Context, q []float32, cond string, args []any, asked int) ([]hit, error) {
	// CROSS JOIN keeps SQLite to this order: the named vectors first,
	// then their memories (it would rather scan a workspace's memories).
	rows, err := s.db.QueryContext(ctx, `SELECT m.seq, m.updated_ms, d.vec FROM vectors v
		CROSS JOIN memories m ON m.id = v.id CROSS JOIN vectors_data d ON d.vseq = v.vseq WHERE `+cond, args...)
	if err != nil {
		return nil, fmt.Errorf("rank vectors: %w", err)
	}
	defer rows.Close()
	var out []hit
	var b []byte
	for rows.Next() {
		var h hit
		if err := rows.Scan(&h.seq, &h.updated, &b); err != nil {
			return nil, err
		}
		if h.cos = float64(dotBlob(q, b)); h.cos > 0 {
			out = append(out, h)
		}
	}
	return out, rows.Err()
}
