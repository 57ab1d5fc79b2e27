package memory

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// bench1MEnv turns on the 1,000,000-memory search benchmark, whose database
// takes minutes to build the first time (it is cached in the temp folder).
const bench1MEnv = "RELAY_BENCH_1M"

// benchGeneration names the cached benchmark databases; bump it when the
// schema or the generator changes.
const benchGeneration = 3

// benchVocab reads testdata/vocab.txt: programming words, most frequent
// first.
func benchVocab(b testing.TB) []string {
	f, err := os.Open("testdata/vocab.txt")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var words []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if w := sc.Text(); w != "" && !strings.HasPrefix(w, "#") {
			words = append(words, w)
		}
	}
	return words
}

// textGen writes memory-like text: 20 to 60 words drawn with Zipf's law
// from the vocabulary, as words occur in real prose.
type textGen struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newTextGen(vocab []string, seed uint64) *textGen {
	r := rand.New(rand.NewPCG(seed, 7))
	return &textGen{r: r, zipf: rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1)), vocab: vocab}
}

func (g *textGen) word() string { return g.vocab[g.zipf.Uint64()] }

func (g *textGen) text() string {
	n := 20 + g.r.IntN(41)
	w := make([]string, n)
	for i := range w {
		w[i] = g.word()
	}
	return strings.Join(w, " ")
}

func (g *textGen) memory(now time.Time) Memory {
	m := Memory{
		Text:      g.text(),
		Author:    fmt.Sprintf("agent%d", g.r.IntN(20)),
		Workspace: fmt.Sprintf("ws%d", g.r.IntN(5)),
		Scope:     ScopeWorkspace,
	}
	switch g.r.IntN(10) {
	case 0:
		m.Scope = ScopeAgent
	case 1:
		m.Scope = ScopeGlobal
	}
	for range g.r.IntN(3) {
		m.Tags = append(m.Tags, g.vocab[100+g.r.IntN(len(g.vocab)-100)])
	}
	m.Created = now.Add(-time.Duration(g.r.Int64N(int64(365 * 24 * time.Hour)))).Truncate(time.Millisecond)
	m.Updated = m.Created
	return m
}

// benchStore opens a store of n generated memories, building it once into
// a file in the temp folder that later runs reuse (benchFile).
func benchStore(b *testing.B, n int, vocab []string, now time.Time) *Store {
	path := benchFile(b, "", n, vocab, now, nil)
	opts := &Options{Now: func() time.Time { return now }}
	st, err := Open(path, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// BenchmarkSearch measures search latency as an agent's @memory:search
// sees it (workspace and viewer filters, default limit), with p50 and p99
// reported in ms, wall clock and CPU, beside the bar for p99
// (bar-p99-ms: 5 ms, at 100,000 and 1,000,000 memories). Each query runs
// twice in turn, through the lexIndex (the figures without a prefix) and
// through SQL alone (sql-…, the search before the index), so that the
// machine's load weighs on both alike. Queries:
//   - words: 1-3 words drawn uniformly from the vocabulary without its 100
//     most frequent words, as people search for distinctive words;
//   - common: 1-3 words drawn as frequent as they are in the text, so "the"
//     and "err" come up often: the worst case;
//   - fts5-bm25: the words queries through a bare FTS5 "ORDER BY rank"
//     (FTS5's own bm25 over every match, every term required), no filters
//     nor recency nor snippets: a reference.
//
// n=N/index reports what the index costs: the time to load it (wall and
// CPU; searches use SQL meanwhile), the time until the sets the queries
// ask for are made (sets-ms, while searching the queries over and over)
// and the background's time reading them (sets-build-ms), and its
// memory (meta-MB, sets-MB).
//
// The 1,000,000 size runs only with RELAY_BENCH_1M=1, as make bench sets
// it.
func BenchmarkSearch(b *testing.B) {
	vocab := benchVocab(b)
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	sizes := []int{10_000, 100_000}
	if os.Getenv(bench1MEnv) != "" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		st := benchStore(b, n, vocab, now)
		qr := rand.New(rand.NewPCG(2, 3))
		g := newTextGen(vocab, 4)
		words := make([]string, 1000)
		common := make([]string, 1000)
		for i := range words {
			var w, c []string
			for range 1 + qr.IntN(3) {
				w = append(w, vocab[100+qr.IntN(len(vocab)-100)])
				c = append(c, g.word())
			}
			words[i], common[i] = strings.Join(w, " "), strings.Join(c, " ")
		}
		f := Filter{Workspace: "ws1", Viewer: "agent3"}
		// The index is loaded and measured once, on the first call (the
		// framework calls a benchmark more than once).
		var index map[string]float64
		b.Run(fmt.Sprintf("n=%d/index", n), func(b *testing.B) {
			if index == nil {
				index = map[string]float64{}
				st.lex.mu.Lock()
				st.lex.reset()
				st.lex.mu.Unlock()
				start, cpu0 := time.Now(), cpuTime()
				warmLex(b, st, nil)
				index["load-ms"] = float64(time.Since(start).Milliseconds())
				index["load-cpu-ms"] = float64((cpuTime() - cpu0).Milliseconds())
				start = time.Now()
				warmLex(b, st, append(slices.Clone(words), common...))
				index["sets-ms"] = float64(time.Since(start).Milliseconds())
				st.lex.mu.Lock()
				index["sets-build-ms"] = float64(st.lex.buildTime.Milliseconds())
				st.lex.mu.Unlock()
				meta, bitmaps := st.lex.size()
				index["meta-MB"] = float64(meta) / (1 << 20)
				index["sets-MB"] = float64(bitmaps) / (1 << 20)
			}
			for k, v := range index {
				b.ReportMetric(v, k)
			}
		})
		run := func(name string, queries []string, searches ...func(q string) error) {
			b.Run(fmt.Sprintf("n=%d/%s", n, name), func(b *testing.B) {
				lat := make([][]time.Duration, len(searches))
				cpu := make([][]time.Duration, len(searches))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					for j, search := range searches {
						start, cpu0 := time.Now(), cpuTime()
						if err := search(queries[i%len(queries)]); err != nil {
							b.Fatal(err)
						}
						lat[j] = append(lat[j], time.Since(start))
						cpu[j] = append(cpu[j], cpuTime()-cpu0)
					}
				}
				b.StopTimer()
				pct := func(d []time.Duration, p float64) float64 {
					slices.Sort(d)
					return float64(d[min(len(d)-1, int(float64(len(d))*p))].Microseconds()) / 1000
				}
				for j, prefix := range []string{"", "sql-"}[:len(searches)] {
					b.ReportMetric(pct(lat[j], 0.50), prefix+"p50-ms")
					b.ReportMetric(pct(lat[j], 0.99), prefix+"p99-ms")
					// CPU time: the wall-clock figures on a shared machine
					// include waiting for a core (see cpuTime).
					b.ReportMetric(pct(cpu[j], 0.50), prefix+"cpu-p50-ms")
					b.ReportMetric(pct(cpu[j], 0.99), prefix+"cpu-p99-ms")
				}
				if len(searches) > 1 {
					b.ReportMetric(5, "bar-p99-ms")
				}
			})
		}
		search := func(sql bool) func(q string) error {
			return func(q string) error {
				st.lex.mu.Lock()
				st.lex.off = sql
				st.lex.mu.Unlock()
				_, err := st.Search(context.Background(), Query{Text: q, Filter: f})
				return err
			}
		}
		run("words", words, search(false), search(true))
		run("common", common, search(false), search(true))
		run("fts5-bm25", words, func(q string) error {
			all, _, _ := ftsQuery(q)
			rows, err := st.db.Query(`SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT 10`, all)
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			rows.Close()
			return rows.Err()
		})
		st.lex.mu.Lock()
		st.lex.off = false
		st.lex.mu.Unlock()
	}
}

// BenchmarkSave measures saving new memories one call at a time into a
// store of 10,000, reported as saves/s. Baseline: the same texts inserted
// one transaction each into a bare SQLite table (same file settings, no
// index, no de-duplication), in the same run.
func BenchmarkSave(b *testing.B) {
	vocab := benchVocab(b)
	g := newTextGen(vocab, 9)
	now := time.Now()
	var seed []Memory
	for range 10_000 {
		seed = append(seed, g.memory(now))
	}
	b.Run("store", func(b *testing.B) {
		st, err := Open(filepath.Join(b.TempDir(), "memory.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		if _, _, err := st.ImportMemories(context.Background(), seed); err != nil {
			b.Fatal(err)
		}
		ms := make([]Memory, b.N)
		for i := range ms {
			ms[i] = g.memory(now)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, _, err := st.Save(context.Background(), ms[i]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "saves/s")
	})
	b.Run("baseline-bare-insert", func(b *testing.B) {
		st, err := Open(filepath.Join(b.TempDir(), "memory.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		if _, err := st.db.Exec(`CREATE TABLE bare (text TEXT)`); err != nil {
			b.Fatal(err)
		}
		texts := make([]string, b.N)
		for i := range texts {
			texts[i] = g.text()
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			tx, err := st.db.Begin()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tx.Exec(`INSERT INTO bare (text) VALUES (?)`, texts[i]); err != nil {
				b.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "saves/s")
	})
}
