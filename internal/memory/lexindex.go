package memory

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// lexIndex is a process's in-memory help for lexical search over a large
// store. Search's passes read the newest memories that hold the query's
// terms and pass the filter (see searchWindow); with SQL alone each match
// costs a read of its row in the memories table (for the filter, the
// length and the time), and the first pass's AND of a rare word with a
// common one makes FTS5 decode the common word's whole posting list, with
// every position ("the" is in nearly every memory): 20 ms and more at a
// million memories. The index holds:
//
//   - meta: what the filter and the ranking read of each memory, by seq
//     (about 21 bytes a memory), so that matches are filtered in memory;
//   - terms: for the terms searched for that lexMinDF memories hold, the
//     set of the memories that hold them (termset.go), so that the passes
//     AND the sets in memory and ask FTS5 only for a term whose set is not
//     made yet.
//
// Both come from the file and give the same memories as the SQL: meta is
// loaded once in the background (searches use the SQL until it is ready)
// and then follows new seqs (a save, a re-save too, takes the next seq); a
// set is made from FTS5 itself (so words are as the index sees them:
// tokenizer, stemming, phrases, prefixes) in the background on a term's
// first search, and extended by the seqs saved since on later ones. A
// re-save leaves its old seq behind in meta and in the sets: the
// matches FTS5 gives never hold it, and the sets-only path checks its
// memories against the table while meta counts more live memories than the
// file. A deletion can let SQLite hand a seq out again, so one
// (memories_deletes) drops everything, which is then loaded again.
type lexIndex struct {
	mu      sync.Mutex
	ready   bool  // meta is loaded
	loading bool  // a load runs
	gen     int64 // memories_deletes of what is loaded
	lastSeq int64 // meta holds every seq up to this
	alive   int64 // live entries in meta
	updated []int64
	words   []uint32
	ws      []uint32 // interned (strs); "" is 0
	author  []uint32
	scope   []uint8 // 0: no memory has this seq
	strs    map[string]uint32

	terms    map[string]*termBits
	bytes    int64 // of the sets
	clock    uint64
	building map[string]bool
	queue    chan string

	bg     context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	closed bool

	// minDF is the smallest document frequency that gets a term a kept
	// set (0 means lexMinDF; tests set more); off makes search use SQL
	// alone (tests compare the two). bitmapRuns, verified and asked count
	// passes over sets alone, memories checked against the table and sets
	// asked for, for tests.
	minDF      int
	off        bool
	bitmapRuns int
	verified   int
	asked      int           // sets asked for
	buildTime  time.Duration // spent reading sets in the background
}

const (
	scopeNone uint8 = iota
	scopeWorkspaceB
	scopeAgentB
	scopeGlobalB
)

func scopeByte(s string) uint8 {
	switch Scope(s) {
	case ScopeAgent:
		return scopeAgentB
	case ScopeGlobal:
		return scopeGlobalB
	}
	return scopeWorkspaceB
}

const (
	// lexMinDF is the smallest document frequency for which a term's set
	// is made and kept: below it the newest dfSample matches that
	// estimateDF reads are every match, and serve as the set.
	lexMinDF = dfSample
	// lexMaxBytes bounds the sets kept (the least recently used go): a
	// set takes about 2 bytes a memory that holds its term, at most 128
	// KiB at a million memories.
	lexMaxBytes = 64 << 20
)

// kept reports whether a term found in df memories gets a set kept in
// memory.
func (ix *lexIndex) kept(df float64) bool {
	floor := lexMinDF
	if ix.minDF > 0 {
		floor = ix.minDF
	}
	return df >= float64(floor)
}

// acquire locks the index for one search and brings meta up to st. It
// returns false, unlocked, when the search is to use SQL alone: the index
// is off, the filter has tags (which meta does not hold), or meta is not
// loaded yet (acquire then starts loading it).
func (ix *lexIndex) acquire(ctx context.Context, db *sql.DB, st storeState, f Filter) (bool, error) {
	if len(f.Tags) > 0 {
		return false, nil
	}
	ix.mu.Lock()
	if ix.off || ix.closed {
		ix.mu.Unlock()
		return false, nil
	}
	if ix.ready && ix.gen != st.deletes {
		ix.reset()
	}
	if !ix.ready {
		if !ix.loading {
			ix.loading = true
			ix.goBG(func(ctx context.Context) { ix.load(ctx, db) })
		}
		ix.mu.Unlock()
		return false, nil
	}
	if st.maxSeq > ix.lastSeq {
		if err := ix.readMeta(ctx, db, ix.lastSeq, st.maxSeq); err != nil {
			ix.mu.Unlock()
			return false, err
		}
	}
	return true, nil
}

// reset drops everything; call with mu held.
func (ix *lexIndex) reset() {
	ix.ready, ix.lastSeq, ix.alive = false, 0, 0
	ix.updated, ix.words, ix.ws, ix.author, ix.scope, ix.strs = nil, nil, nil, nil, nil, nil
	ix.terms, ix.bytes = nil, 0
}

// goBG runs fn in the background until Close; call with mu held.
func (ix *lexIndex) goBG(fn func(ctx context.Context)) {
	if ix.bg == nil {
		ix.bg, ix.stop = context.WithCancel(context.Background())
	}
	ix.wg.Add(1)
	go func() {
		defer ix.wg.Done()
		fn(ix.bg)
	}()
}

// close stops the background work and waits for it.
func (ix *lexIndex) close() {
	ix.mu.Lock()
	ix.closed = true
	if ix.stop != nil {
		ix.stop()
	}
	ix.mu.Unlock()
	ix.wg.Wait()
}

// load reads meta whole. A failure leaves it unloaded, to be tried again
// by the next search.
func (ix *lexIndex) load(ctx context.Context, db *sql.DB) {
	var maxSeq, deletes int64
	err := db.QueryRowContext(ctx, `SELECT coalesce((SELECT max(seq) FROM memories), 0),
		(SELECT n FROM memories_deletes)`).Scan(&maxSeq, &deletes)
	fresh := &lexIndex{strs: map[string]uint32{"": 0}}
	if err == nil {
		err = fresh.readMeta(ctx, db, 0, maxSeq)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.loading = false
	if err != nil || ix.closed {
		return
	}
	ix.reset()
	ix.ready, ix.gen, ix.lastSeq, ix.alive = true, deletes, fresh.lastSeq, fresh.alive
	ix.updated, ix.words, ix.ws, ix.author, ix.scope, ix.strs = fresh.updated, fresh.words, fresh.ws, fresh.author, fresh.scope, fresh.strs
}

// readMeta reads the memories with from < seq <= to into meta.
func (ix *lexIndex) readMeta(ctx context.Context, db *sql.DB, from, to int64) error {
	rows, err := db.QueryContext(ctx, `SELECT seq, updated_ms, words, workspace, author, scope
		FROM memories WHERE seq > ? AND seq <= ?`, from, to)
	if err != nil {
		return fmt.Errorf("read memories for the search index: %w", err)
	}
	defer rows.Close()
	n := int(to + 1)
	if n > len(ix.scope) {
		ix.updated = slices.Grow(ix.updated, n-len(ix.updated))[:n]
		ix.words = slices.Grow(ix.words, n-len(ix.words))[:n]
		ix.ws = slices.Grow(ix.ws, n-len(ix.ws))[:n]
		ix.author = slices.Grow(ix.author, n-len(ix.author))[:n]
		ix.scope = slices.Grow(ix.scope, n-len(ix.scope))[:n]
	}
	intern := func(s []byte) uint32 {
		if id, ok := ix.strs[string(s)]; ok {
			return id
		}
		id := uint32(len(ix.strs))
		ix.strs[string(s)] = id
		return id
	}
	var seq, updated, words int64
	var ws, author, scope []byte
	for rows.Next() {
		if err := rows.Scan(&seq, &updated, &words, &ws, &author, &scope); err != nil {
			return err
		}
		if ix.scope[seq] == scopeNone {
			ix.alive++
		}
		ix.updated[seq], ix.words[seq] = updated, uint32(words)
		ix.ws[seq], ix.author[seq], ix.scope[seq] = intern(ws), intern(author), scopeByte(string(scope))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	ix.lastSeq = to
	return nil
}

// filter is a Filter (without tags) in meta's terms.
type lexFilter struct {
	ws, viewer, author uint32
	scope              uint8
	wsSet, viewerSet   bool
	authorSet          bool
}

func (ix *lexIndex) filter(f Filter) lexFilter {
	var lf lexFilter
	look := func(s string) uint32 {
		id, ok := ix.strs[s]
		if !ok {
			return ^uint32(0) // matches no memory
		}
		return id
	}
	if f.Workspace != "" {
		lf.ws, lf.wsSet = look(f.Workspace), true
	}
	if f.Viewer != "" {
		lf.viewer, lf.viewerSet = look(f.Viewer), true
	}
	if f.Author != "" {
		lf.author, lf.authorSet = look(f.Author), true
	}
	if f.Scope != "" {
		lf.scope = scopeByte(string(f.Scope))
	}
	return lf
}

// pass reports whether memory seq exists (as far as meta knows) and
// passes lf: Filter.where's conditions.
func (ix *lexIndex) pass(seq int64, lf *lexFilter) bool {
	if seq <= 0 || seq >= int64(len(ix.scope)) {
		return false
	}
	sc := ix.scope[seq]
	switch {
	case sc == scopeNone:
		return false
	case lf.wsSet && ix.ws[seq] != lf.ws && sc != scopeGlobalB:
		return false
	case lf.viewerSet && sc == scopeAgentB && ix.author[seq] != lf.viewer:
		return false
	case lf.authorSet && ix.author[seq] != lf.author:
		return false
	case lf.scope != scopeNone && sc != lf.scope:
		return false
	}
	return true
}

func (ix *lexIndex) candidate(seq int64) candidate {
	return candidate{seq: seq, updated: ix.updated[seq], words: int(ix.words[seq])}
}

// bitmap returns term's set, complete up to maxSeq, or nil when it is
// not made yet (it is then made in the background). Call with mu held.
func (ix *lexIndex) bitmap(ctx context.Context, db *sql.DB, term string, maxSeq int64) (*termBits, error) {
	b := ix.terms[term]
	if b == nil {
		if ix.building == nil {
			ix.building, ix.queue = map[string]bool{}, make(chan string, 256)
			ix.goBG(func(ctx context.Context) { ix.builder(ctx, db) })
		}
		if !ix.building[term] {
			select {
			case ix.queue <- term:
				ix.building[term] = true
				ix.asked++
			default: // asked again by a later search
			}
		}
		return nil, nil
	}
	ix.clock++
	b.used = ix.clock
	if b.horizon < maxSeq {
		if err := ix.extend(ctx, db, b, term, maxSeq); err != nil {
			delete(ix.terms, term)
			ix.bytes -= b.size()
			return nil, err
		}
	}
	return b, nil
}

// extend adds to b the seqs after b.horizon, up to maxSeq, that hold
// term.
func (ix *lexIndex) extend(ctx context.Context, db *sql.DB, b *termBits, term string, maxSeq int64) error {
	var list sql.NullString
	err := db.QueryRowContext(ctx, `SELECT group_concat(rowid) FROM memories_fts
		WHERE memories_fts MATCH ? AND rowid > ? AND rowid <= ?`, term, b.horizon, maxSeq).Scan(&list)
	if err != nil {
		return fmt.Errorf("read the memories holding %s: %w", term, err)
	}
	before := b.size()
	b.add(slices.Collect(seqList(list.String)), maxSeq)
	ix.bytes += b.size() - before
	return nil
}

// builder makes the sets asked for, one at a time, outside the lock
// (the read is the long part), and keeps them if no deletion happened
// meanwhile.
func (ix *lexIndex) builder(ctx context.Context, db *sql.DB) {
	for {
		var term string
		select {
		case <-ctx.Done():
			return
		case term = <-ix.queue:
		}
		var maxSeq, deletes int64
		err := db.QueryRowContext(ctx, `SELECT coalesce((SELECT max(seq) FROM memories), 0),
			(SELECT n FROM memories_deletes)`).Scan(&maxSeq, &deletes)
		b := &termBits{}
		scratch := &lexIndex{}
		start := time.Now()
		if err == nil {
			err = scratch.extend(ctx, db, b, term, maxSeq)
		}
		if err == nil {
			b.bm.RunOptimize()
			scratch.bytes = b.size()
		}
		took := time.Since(start)
		ix.mu.Lock()
		delete(ix.building, term)
		ix.buildTime += took
		if err == nil && ix.ready && ix.gen == deletes && ix.terms[term] == nil {
			if ix.terms == nil {
				ix.terms = map[string]*termBits{}
			}
			for ix.bytes+scratch.bytes > lexMaxBytes && len(ix.terms) > 0 {
				ix.evict()
			}
			ix.clock++
			b.used = ix.clock
			ix.terms[term], ix.bytes = b, ix.bytes+scratch.bytes
		}
		ix.mu.Unlock()
	}
}

// evict drops the least recently used set; call with mu held.
func (ix *lexIndex) evict() {
	var oldest string
	for t, x := range ix.terms {
		if oldest == "" || x.used < ix.terms[oldest].used {
			oldest = t
		}
	}
	ix.bytes -= ix.terms[oldest].size()
	delete(ix.terms, oldest)
}

// size returns the bytes meta and the sets take.
func (ix *lexIndex) size() (meta, bitmaps int64) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return int64(cap(ix.updated))*8 + int64(cap(ix.words)+cap(ix.ws)+cap(ix.author))*4 + int64(cap(ix.scope)), ix.bytes
}

// seqList yields the numbers of a comma-separated list (group_concat's).
func seqList(s string) func(yield func(int64) bool) {
	return func(yield func(int64) bool) {
		for f := range strings.SplitSeq(s, ",") {
			if n, err := strconv.ParseInt(f, 10, 64); err == nil && !yield(n) {
				return
			}
		}
	}
}
