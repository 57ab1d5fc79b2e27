package memory

import (
	"context"
	"fmt"
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
	return strings.Join(terms, " "), strings.Join(terms, " OR "), len(terms)
}

// isWordEnd reports whether s ends in a letter or digit, so that "deplo*" is
// a prefix but "(*" is not.
func isWordEnd(s string) bool {
	r := []rune(s)
	last := r[len(r)-1]
	return unicode.IsLetter(last) || unicode.IsNumber(last) || unicode.IsMark(last)
}

// Search implements API. The ranking (see docs/memory.md):
//
//	score = -bm25(text, tags×0.5) × (1 + H / (H + age))
//
// where age is the time since the memory was last saved and H is
// Options.HalfLife: relevance counts most, and among equally relevant
// memories the newer wins (a new memory's boost is 2, one H old 1.5, a very
// old one 1). Memories that hold every term come first; when they are fewer
// than the limit, memories holding some of the terms follow.
func (s *Store) Search(ctx context.Context, q Query) ([]Result, error) {
	limit := clampLimit(q.Limit, DefaultLimit)
	all, anyTerm, n := ftsQuery(q.Text)
	if n == 0 {
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
	hits, err := s.rank(ctx, all, q.Filter, limit, nil)
	if err == nil && len(hits) < limit && n > 1 {
		var more []hit
		more, err = s.rank(ctx, anyTerm, q.Filter, limit-len(hits), hits)
		hits = append(hits, more...)
	}
	if err != nil {
		return nil, fmt.Errorf("search memories in %s: %w", s.path, err)
	}
	res, err := s.fetch(ctx, anyTerm, hits)
	if err != nil {
		return nil, fmt.Errorf("search memories in %s: %w", s.path, err)
	}
	return res, nil
}

type hit struct {
	seq   int64
	score float64
}

// rank returns the seqs of the best matches of expr, best first, leaving
// out those in skip.
func (s *Store) rank(ctx context.Context, expr string, f Filter, limit int, skip []hit) ([]hit, error) {
	where, args := f.where()
	h := float64(s.opts.HalfLife.Milliseconds())
	now := s.opts.Now().UnixMilli()
	var not string
	if len(skip) > 0 {
		not = ` AND m.seq NOT IN (` + strings.Repeat("?,", len(skip)-1) + `?)`
		for _, k := range skip {
			args = append(args, k.seq)
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT m.seq,
			bm25(memories_fts, 1.0, 0.5) * (1.0 + ? / (? + max(0, ? - m.updated_ms))) AS score
		FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
		WHERE memories_fts MATCH ? AND `+where+not+`
		ORDER BY score LIMIT ?`,
		append(append([]any{h, h, now, expr}, args...), limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []hit
	for rows.Next() {
		var k hit
		if err := rows.Scan(&k.seq, &k.score); err != nil {
			return nil, err
		}
		k.score = -k.score // bm25 is negative, lower is better
		out = append(out, k)
	}
	return out, rows.Err()
}

// fetch loads the memories of hits, in their order, with snippets that mark
// the words of expr.
func (s *Store) fetch(ctx context.Context, expr string, hits []hit) ([]Result, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	args := []any{expr}
	for _, k := range hits {
		args = append(args, k.seq)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+`, m.seq,
			snippet(memories_fts, 0, '[', ']', '…', 16)
		FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
		WHERE memories_fts MATCH ? AND memories_fts.rowid IN (`+strings.Repeat("?,", len(hits)-1)+`?)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	bySeq := make(map[int64]Result, len(hits))
	for rows.Next() {
		var r Result
		var seq int64
		if r.Memory, err = scanMemory(rows, &seq, &r.Snippet); err != nil {
			return nil, err
		}
		bySeq[seq] = r
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(hits))
	for _, k := range hits {
		if r, ok := bySeq[k.seq]; ok { // gone if forgotten meanwhile
			r.Score = k.score
			out = append(out, r)
		}
	}
	return out, nil
}
