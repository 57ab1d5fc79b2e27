package memory

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
)

// maxQueryTerms caps how many words or phrases of a query are used, so that
// a pasted page cannot make one search slow.
const maxQueryTerms = 32

// ftsQuery turns user text into FTS5 expressions that are never a syntax
// error, whatever the text holds: every word or phrase is double-quoted by
// us and carries only letters, digits and spaces. all requires every term
// (FTS5's implicit AND), any requires one (OR); n is the number of terms,
// 0 when the text has no words at all.
//
// The user's syntax: words separated by white space; "a phrase" in balanced
// double quotes; a trailing * makes the last word a prefix (deplo*);
// punctuation inside a word makes a phrase of its parts (multi-agent is
// "multi agent", don't is "don t"). Everything else (AND, OR, NOT, NEAR,
// parentheses, colons, carets) is just text.
func ftsQuery(text string) (all, any string, n int) {
	terms := queryTerms(text)
	return strings.Join(terms, " "), strings.Join(terms, " OR "), len(terms)
}

// countWords counts the words of s as the index sees them (runs of
// letters and digits), for BM25's length normalisation.
func countWords(s string) int {
	return len(strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
	}))
}

// queryTerms splits user text into quoted FTS5 phrases (see ftsQuery).
func queryTerms(text string) []string {
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return ' '
		}
		return r
	}, text)
	if strings.Count(text, `"`)%2 == 1 {
		text = strings.ReplaceAll(text, `"`, " ") // unbalanced: no phrases
	}
	var terms []string
	add := func(chunk string, prefix bool) {
		words := strings.FieldsFunc(chunk, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
		})
		if len(words) == 0 || len(terms) >= maxQueryTerms {
			return
		}
		t := `"` + strings.Join(words, " ") + `"`
		if prefix {
			t += " *"
		}
		terms = append(terms, t)
	}
	for i, part := range strings.Split(text, `"`) {
		if i%2 == 1 { // inside quotes
			add(part, false)
			continue
		}
		for _, f := range strings.Fields(part) {
			add(f, strings.HasSuffix(f, "*") && len(strings.TrimRight(f, "*")) > 0 && isWordEnd(strings.TrimRight(f, "*")))
		}
	}
	return terms
}

// isWordEnd reports whether s ends in a letter or digit, so that "deplo*" is
// a prefix but "(*" is not.
func isWordEnd(s string) bool {
	r := []rune(s)
	last := r[len(r)-1]
	return unicode.IsLetter(last) || unicode.IsNumber(last) || unicode.IsMark(last)
}

// BM25 parameters, FTS5's defaults.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// How much of a large store one search reads. FTS5's own bm25() counts
// every row holding each term on every query, and reading a match costs a
// microsecond or so, so ranking every match of a common word would cost
// milliseconds per hundred thousand memories. Instead search ranks the
// newest searchWindow memories (after the filters) that hold every term,
// then, when those are fewer than the limit, the newest termWindow holding
// each term; and it estimates how common a term is from how far back its
// newest dfSample matches reach. Save order is recency order (a re-save
// moves a memory to the front), so what is left unread is older and would
// rank lower on recency. Below those counts everything is exact. A limit
// above a window widens it.
const (
	searchWindow = 200
	termWindow   = 100
	dfSample     = 100
)

// Search implements API. The ranking (docs/memory.md explains it):
//
//	score = Σ idf(term) × (k1+1) / (1 + k1 × (1 − b + b × words/avgWords)) × (1 + H / (H + age))
//
// over the query terms a memory holds: BM25 with each term counted once
// (memories are short notes), k1 = 1.2, b = 0.75, times a recency factor
// where age is the time since the memory was last saved and H is
// Options.HalfLife (a new memory gets ×2, one H old ×1.5, a very old one
// ×1). Memories that hold every term come first; when they are fewer than
// the limit, memories holding some of the terms follow.
func (s *Store) Search(ctx context.Context, q Query) ([]Result, error) {
	limit := clampLimit(q.Limit, DefaultLimit)
	terms := queryTerms(q.Text)
	mode, err := s.mode(q.Mode)
	if err != nil {
		return nil, err
	}
	if mode != ModeLexical && strings.TrimSpace(q.Text) != "" {
		return s.searchByMeaning(ctx, mode, q.Text, terms, q.Filter, limit)
	}
	if len(terms) == 0 {
		f := q.Filter
		f.Limit = limit
		ms, err := s.List(ctx, f)
		if err != nil {
			return nil, err
		}
		res := make([]Result, len(ms))
		for i, m := range ms {
			res[i] = Result{Memory: m}
		}
		return res, nil
	}
	hits, err := s.lexical(ctx, terms, q.Filter, limit)
	if err == nil {
		var res []Result
		if res, err = s.fetch(ctx, terms, hits, nil); err == nil {
			return res, nil
		}
	}
	return nil, fmt.Errorf("search memories in %s: %w", s.path, err)
}

// storeState is what one search reads of the whole store first.
type storeState struct {
	docs, words, maxSeq int64
	deletes             int64 // memories_deletes
}

type candidate struct {
	seq     int64
	updated int64
	words   int
	score   float64
	every   bool // holds every term of the query
}

// lexical returns the best limit candidates for terms, best first.
func (s *Store) lexical(ctx context.Context, terms []string, f Filter, limit int) ([]candidate, error) {
	var st storeState
	if err := s.db.QueryRowContext(ctx, `SELECT docs, words, coalesce((SELECT max(seq) FROM memories), 0),
		(SELECT n FROM memories_deletes) FROM stats`).Scan(&st.docs, &st.words, &st.maxSeq, &st.deletes); err != nil {
		return nil, err
	}
	docs := st.docs
	if docs == 0 {
		return nil, nil
	}
	avg := float64(st.words) / float64(docs)
	now := s.opts.Now().UnixMilli()
	h := float64(s.opts.HalfLife.Milliseconds())
	score := func(c *candidate, sumIDF float64) {
		norm := (bm25K1 + 1) / (1 + bm25K1*(1-bm25B+bm25B*float64(c.words)/max(avg, 1)))
		c.score = sumIDF * norm * (1 + h/(h+float64(max(0, now-c.updated))))
	}
	best := func(cs []candidate) []candidate {
		slices.SortFunc(cs, func(a, b candidate) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			return cmp.Compare(b.seq, a.seq) // newer first on ties
		})
		return cs[:min(len(cs), limit)]
	}

	// The lexIndex, when it can serve this search, finds the same
	// candidates as the SQL without reading the memories table.
	fast, err := s.lex.acquire(ctx, s.db, st, f)
	if err != nil {
		return nil, err
	}
	if fast {
		defer s.lex.mu.Unlock()
	}
	idf := make([]float64, len(terms))
	dfs := make([]float64, len(terms))
	heads := make([][]int64, len(terms))
	for i, t := range terms {
		var head []int64
		if fast {
			if head, err = s.lex.head(ctx, s.db, t, st); err != nil {
				return nil, err
			}
		}
		if head == nil {
			if head, err = s.newestMatches(ctx, t, st.maxSeq); err != nil {
				return nil, err
			}
		}
		dfs[i], heads[i] = estimateDF(head, docs, st.maxSeq), head
		idf[i] = math.Log(1 + (float64(docs)-dfs[i]+0.5)/(dfs[i]+0.5))
	}
	// Pass 1: memories holding every term.
	var all []candidate
	if fast {
		all, err = s.lex.every(ctx, s.db, terms, dfs, heads, st, f, max(searchWindow, limit))
	} else {
		all, err = s.candidates(ctx, strings.Join(terms, " "), f, max(searchWindow, limit))
	}
	if err != nil {
		return nil, err
	}
	var sum float64
	for _, x := range idf {
		sum += x
	}
	for i := range all {
		score(&all[i], sum)
		all[i].every = true
	}
	hits := best(all)
	if len(hits) < limit && len(terms) > 1 {
		// Pass 2: memories holding some of the terms, each term's newest
		// termWindow matches, scored by the terms they were found with.
		sums := map[int64]float64{}
		for _, c := range all {
			sums[c.seq] = -1 // found by pass 1
		}
		var some []candidate
		for i, t := range terms {
			var cs []candidate
			if fast {
				cs, err = s.lex.one(ctx, s.db, t, dfs[i], heads[i], st, f, max(termWindow, limit))
			} else {
				cs, err = s.candidates(ctx, t, f, max(termWindow, limit))
			}
			if err != nil {
				return nil, err
			}
			for _, c := range cs {
				if sums[c.seq] < 0 {
					continue
				}
				if _, seen := sums[c.seq]; !seen {
					some = append(some, c)
				}
				sums[c.seq] += idf[i]
			}
		}
		for i := range some {
			score(&some[i], sums[some[i].seq])
		}
		hits = append(hits, best(some)[:min(len(some), limit-len(hits))]...)
	}
	return hits, nil
}

// newestMatches returns the newest dfSample matches of term up to
// maxSeq (all of them when fewer), newest first, from FTS5. The lexIndex
// reads the same from a term's set (lexIndex.head).
func (s *Store) newestMatches(ctx context.Context, term string, maxSeq int64) ([]int64, error) {
	var list sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT group_concat(rowid) FROM (SELECT rowid FROM memories_fts
		WHERE memories_fts MATCH ? AND rowid <= ? ORDER BY rowid DESC LIMIT ?)`, term, maxSeq, dfSample).Scan(&list); err != nil {
		return nil, err
	}
	head := slices.AppendSeq([]int64{}, seqList(list.String)) // not nil: newest reads it
	slices.SortFunc(head, func(a, b int64) int { return cmp.Compare(b, a) })
	return head, nil
}

// estimateDF returns how many memories (of those up to maxSeq) hold a
// term whose newest matches are head (newestMatches): exact when fewer
// than dfSample do, else extrapolated from how far back the dfSample
// newest matches reach.
func estimateDF(head []int64, docs, maxSeq int64) float64 {
	n := len(head)
	if n < dfSample {
		return float64(n)
	}
	last := head[dfSample-1]
	return min(float64(docs), float64(dfSample)*float64(docs)/float64(maxSeq-last+1))
}

// candidates returns the newest window memories that match expr and pass
// f, newest first.
func (s *Store) candidates(ctx context.Context, expr string, f Filter, window int) ([]candidate, error) {
	where, args := f.where()
	rows, err := s.db.QueryContext(ctx, `SELECT m.seq, m.updated_ms, m.words
		FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
		WHERE memories_fts MATCH ? AND `+where+`
		ORDER BY memories_fts.rowid DESC LIMIT ?`,
		append(append([]any{expr}, args...), window)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.seq, &c.updated, &c.words); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// fetch loads the memories of hits, in their order, with snippets that mark
// the words of terms. (FTS5's snippet() would re-run the query for each
// row, which costs as much as the search.) scores, when not nil, gives
// each result its Scores.
func (s *Store) fetch(ctx context.Context, terms []string, hits []candidate, scores map[int64]*Scores) ([]Result, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	args := make([]any, len(hits))
	for i, k := range hits {
		args[i] = k.seq
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+`, m.seq FROM memories m
		WHERE m.seq IN (`+strings.Repeat("?,", len(hits)-1)+`?)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	bySeq := make(map[int64]Memory, len(hits))
	for rows.Next() {
		var seq int64
		m, err := scanMemory(rows, &seq)
		if err != nil {
			return nil, err
		}
		bySeq[seq] = m
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	words := termWords(terms)
	out := make([]Result, 0, len(hits))
	for _, k := range hits {
		if m, ok := bySeq[k.seq]; ok { // gone if forgotten meanwhile
			out = append(out, Result{Memory: m, Score: k.score, Snippet: snippet(m.Text, words, snippetWords), Scores: scores[k.seq]})
		}
	}
	return out, nil
}
