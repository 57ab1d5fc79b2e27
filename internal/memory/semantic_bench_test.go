package memory

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// benchDims is the vector length of the benchmarks: nomic-embed-text's.
const benchDims = 768

// wordEmbedder stands in for a model in benchmarks, in process: each word
// is a fixed pseudo-random vector (seeded by its hash), a text the sum of
// its words', so texts sharing words land near each other. spent adds up
// the time spent embedding, reported apart from the search's.
type wordEmbedder struct {
	mu    sync.Mutex
	words map[string][]float32
	spent atomic.Int64
}

func (e *wordEmbedder) Model() string { return fmt.Sprintf("bench/words@%d", benchDims) }

func (e *wordEmbedder) word(w string) []float32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v, ok := e.words[w]; ok {
		return v
	}
	h := fnv.New64a()
	h.Write([]byte(w))
	r := rand.New(rand.NewPCG(h.Sum64(), 11))
	v := make([]float32, benchDims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	if e.words == nil {
		e.words = map[string][]float32{}
	}
	e.words[w] = v
	return v
}

func (e *wordEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	start := time.Now()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, benchDims)
		for _, w := range strings.Fields(t) {
			for j, x := range e.word(w) {
				v[j] += x
			}
		}
		out[i] = v
	}
	e.spent.Add(int64(time.Since(start)))
	return out, nil
}

// benchVecStore opens a store of n generated memories with their vectors,
// building it once into a file in the temp folder that later runs reuse
// (benchFile).
func benchVecStore(b *testing.B, n int, vocab []string, now time.Time, em *wordEmbedder) *Store {
	path := benchFile(b, "vec-", n, vocab, now, em)
	opts := &Options{Now: func() time.Time { return now }, Embedder: em, NoBackground: true}
	start := time.Now()
	st, err := Open(path, opts)
	if err != nil {
		b.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		b.Logf("opened %s in %v", path, d.Round(time.Millisecond)) // a migration
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// BenchmarkSemanticSearch measures searches by meaning as @memory:search
// makes them (workspace and viewer filters, default limit) over memories
// with 768-dimension vectors, p50 and p99 in ms without the embedder's
// time, which is reported apart (embed-p99-ms: here an in-process stand-in;
// a real model's is what relay doctor shows), and the CPU time per search
// beside them, with the bar for p99 (bar-p99-ms) and, for
// semantic, the share of the brute-force ten best it finds (recall@10,
// over recallQueries queries). Modes: semantic and hybrid
// (the latter runs the lexical search too, while the embedder works; its
// p50 and p99 include the stand-in embedder's time, since it overlaps). The first search of a process
// loads the index into memory (load-ms; the memory it holds, index-MB).
//
// The 1,000,000 size runs only with RELAY_BENCH_1M=1, as make bench sets
// it (its file takes about 3.5 GB and minutes to build the first time).
func BenchmarkSemanticSearch(b *testing.B) {
	vocab := benchVocab(b)
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	sizes := []int{100_000}
	if os.Getenv(bench1MEnv) != "" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		em := &wordEmbedder{}
		st := benchVecStore(b, n, vocab, now, em)
		heap0 := heapBytes()
		load, loadCPU := time.Now(), cpuTime()
		if _, err := st.Search(context.Background(), Query{Text: "warm up", Mode: ModeSemantic}); err != nil {
			b.Fatal(err)
		}
		loadMS := float64(time.Since(load).Microseconds()) / 1000
		loadCPUMS := float64((cpuTime() - loadCPU).Microseconds()) / 1000
		indexMB := float64(heapBytes()-heap0) / 1e6
		qr := rand.New(rand.NewPCG(2, 3))
		queries := make([]string, 1000)
		for i := range queries {
			var w []string
			for range 1 + qr.IntN(3) {
				w = append(w, vocab[100+qr.IntN(len(vocab)-100)])
			}
			queries[i] = strings.Join(w, " ")
		}
		f := Filter{Workspace: "ws1", Viewer: "agent3"}
		recall := benchRecall(b, st, queries[:recallQueries], f)
		// Hybrid's lexical part has an index of its own, loaded in the
		// background on its first search, with a set per searched term
		// made on the term's first search (BenchmarkSearch measures
		// them): loaded and made here, so that the searches measured are
		// those of a hub that has been up a while, not its first.
		lexStart := time.Now()
		warmLexFor(b, st, queries, Query{Mode: ModeHybrid, Filter: f})
		lexWarmMS := float64(time.Since(lexStart).Milliseconds())
		bar := 5.0 // the p99 bars, in ms
		if n >= 1_000_000 {
			bar = 20
		}
		for _, mode := range []string{ModeSemantic, ModeHybrid} {
			b.Run(fmt.Sprintf("n=%d/%s", n, mode), func(b *testing.B) {
				lat := make([]time.Duration, 0, b.N)
				emb := make([]time.Duration, 0, b.N)
				cpu := make([]time.Duration, 0, b.N)
				reads0 := st.index.reads.Load()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					before, cpu0 := em.spent.Load(), cpuTime()
					start := time.Now()
					if _, err := st.Search(context.Background(), Query{Text: queries[i%len(queries)], Mode: mode, Filter: f}); err != nil {
						b.Fatal(err)
					}
					e := time.Duration(em.spent.Load() - before)
					emb = append(emb, e)
					if mode == ModeHybrid {
						// The embedder runs beside the lexical part:
						// its time is not simply added, so it stays in
						// (the stand-in's own work is microseconds).
						e = 0
					}
					lat = append(lat, time.Since(start)-e)
					cpu = append(cpu, cpuTime()-cpu0-e)
				}
				b.StopTimer()
				b.ReportMetric(float64(st.index.reads.Load()-reads0)/float64(b.N), "exact-reads")
				pct := func(d []time.Duration, p float64) float64 {
					slices.Sort(d)
					return float64(d[min(len(d)-1, int(float64(len(d))*p))].Microseconds()) / 1000
				}
				b.ReportMetric(pct(lat, 0.50), "p50-ms")
				b.ReportMetric(pct(lat, 0.99), "p99-ms")
				b.ReportMetric(pct(emb, 0.99), "embed-p99-ms")
				b.ReportMetric(pct(cpu, 0.50), "cpu-p50-ms")
				b.ReportMetric(pct(cpu, 0.99), "cpu-p99-ms")
				b.ReportMetric(bar, "bar-p99-ms")
				b.ReportMetric(loadMS, "load-ms")
				b.ReportMetric(loadCPUMS, "load-cpu-ms")
				b.ReportMetric(indexMB, "index-MB")
				anon, file := rssMB()
				b.ReportMetric(anon, "rss-anon-MB")
				b.ReportMetric(file, "rss-file-MB")
				if mode == ModeHybrid {
					b.ReportMetric(lexWarmMS, "lex-warm-ms")
				}
				if mode == ModeSemantic {
					b.ReportMetric(recall, "recall@10")
				}
			})
		}
	}
}

// recallQueries is how many queries the benchmark's recall is measured
// on: each reads every vector of the store.
const recallQueries = 20

// benchRecall is the share of the brute-force ten best (every vector
// passing f read and ranked by exact cosine, as bruteForce does; here in
// one pass over the file for all the queries) that semantic search
// finds, over queries.
func benchRecall(b *testing.B, st *Store, queries []string, f Filter) float64 {
	const limit = 10
	qs := make([][]float32, len(queries))
	best := make([][]hit, len(queries))
	for i, text := range queries {
		qs[i] = queryVec(b, st, text)
	}
	where, args := f.where()
	rows, err := st.db.Query(`SELECT m.seq, m.updated_ms, d.vec FROM vectors v
		JOIN memories m ON m.id = v.id JOIN vectors_data d ON d.vseq = v.vseq
		WHERE v.model = ? AND `+where, append([]any{st.opts.Embedder.Model()}, args...)...)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var vec sql.RawBytes
	for rows.Next() {
		var h hit
		if err := rows.Scan(&h.seq, &h.updated, &vec); err != nil {
			b.Fatal(err)
		}
		for i, q := range qs {
			if h.cos = float64(dotBlob(q, vec)); h.cos <= 0 {
				continue
			}
			at, _ := slices.BinarySearchFunc(best[i], h, func(a, b hit) int {
				return cmp.Or(cmp.Compare(b.cos, a.cos), cmp.Compare(b.seq, a.seq))
			})
			if at < limit {
				best[i] = slices.Insert(best[i], at, h)[:min(limit, len(best[i])+1)]
			}
		}
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	found, total := 0, 0
	for i, q := range qs {
		got, err := st.semantic(context.Background(), q, f, limit)
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range best[i] {
			if slices.Contains(got, h) {
				found++
			}
			total++
		}
	}
	return float64(found) / float64(max(1, total))
}

// heapBytes is the Go heap in use after a collection: the difference
// around the first search is the index's memory (index-MB).
func heapBytes() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// rssMB returns the process's resident memory in MB as Linux counts it
// (/proc/self/status): anonymous (the heap: the indexes) and file-backed
// (pages of the store file mapped by SQLite, which the kernel can drop
// and share with the page cache). Zeros elsewhere.
func rssMB() (anon, file float64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		var kb float64
		if _, err := fmt.Sscanf(line, "RssAnon: %f kB", &kb); err == nil {
			anon = kb / 1000
		}
		if _, err := fmt.Sscanf(line, "RssFile: %f kB", &kb); err == nil {
			file = kb / 1000
		}
	}
	return anon, file
}

// cpuTime is the CPU time this process used so far (user and system, all
// threads). On a shared machine the wall-clock percentiles include waiting
// for a core; the CPU time per search (cpu-p50-ms, cpu-p99-ms) does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSignBits measures the coarse pass alone: the distances
// (signQuery) of 1,000,000 768-bit codes to a query and the 2,048
// nearest, of every row and of a fifth of them (a filter on one
// workspace of five), scattered and in the index's order (vecorder.go),
// the filter's rows already known.
func BenchmarkSignBits(b *testing.B) {
	const n = 1_000_000
	r := rand.New(rand.NewPCG(5, 6))
	x := &vecIndex{words: benchDims / 64, keys: make([]rowKey, n), meta: make([]rowMeta, n), scale: make([]float32, n), errb: make([]float32, n)}
	for i := range x.keys {
		x.keys[i] = rowKey{scope: 1, workspace: 2 + uint32(r.IntN(5))}
	}
	for i := range n {
		x.vseqs = append(x.vseqs, int64(i+1))
		for range x.words {
			x.codes = append(x.codes, r.Uint64())
		}
	}
	qv := make([]float32, benchDims)
	for i := range qv {
		qv[i] = float32(r.NormFloat64())
	}
	q := newSignQuery(unit(qv), x.words)
	for _, c := range []struct {
		name string
		mf   memFilter
	}{{"all", memFilter{}}, {"a fifth", memFilter{workspace: 2}}, {"a fifth, ordered", memFilter{workspace: 2}}} {
		b.Run(c.name, func(b *testing.B) {
			if strings.HasSuffix(c.name, "ordered") {
				x.cluster() // the filter's rows in one run, as a loaded index keeps them
			}
			x.nearest(q, &c.mf, semWindow)
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				if got := x.nearest(q, &c.mf, semWindow); len(got) != semWindow {
					b.Fatalf("%d nearest, want %d", len(got), semWindow)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms")
		})
	}
}

// BenchmarkIndexLoad measures what a process's first search by meaning
// pays at 100,000 memories: loading the in-memory index (sign codes, int8
// copies and what the filter needs) from the file, wall and CPU time.
func BenchmarkIndexLoad(b *testing.B) {
	em := &wordEmbedder{}
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	st := benchVecStore(b, 100_000, benchVocab(b), now, em)
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cpu0 := cpuTime()
		x := &vecIndex{}
		if err := x.refresh(context.Background(), st, em.Model()); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - cpu0
		x.close()
		if len(x.vseqs) != 100_000 {
			b.Fatalf("%d vectors loaded", len(x.vseqs))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "load-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "load-cpu-ms")
}
