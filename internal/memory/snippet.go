package memory

import (
	"strings"
	"unicode"
)

// snippetWords is how many words of a memory a snippet shows.
const snippetWords = 16

// queryWord is one word of a query as the snippet matches it.
type queryWord struct {
	word   string // lower case
	prefix bool   // the query said word*
}

// termWords takes the words back out of quoted FTS5 terms.
func termWords(terms []string) []queryWord {
	var out []queryWord
	for _, t := range terms {
		prefix := strings.HasSuffix(t, " *")
		ws := strings.Fields(strings.Trim(strings.TrimSuffix(t, " *"), `"`))
		for i, w := range ws {
			out = append(out, queryWord{word: strings.ToLower(w), prefix: prefix && i == len(ws)-1})
		}
	}
	return out
}

// matches says whether a word of the text is a form of the query word:
// the same, the query's prefix, or sharing all but a short ending with it
// (migrations, migrating), as porter stemming would roughly have it.
func (q queryWord) matches(w string) bool {
	w = strings.ToLower(w)
	if w == q.word || (q.prefix && strings.HasPrefix(w, q.word)) {
		return true
	}
	n := 0
	for n < len(w) && n < len(q.word) && w[n] == q.word[n] {
		n++
	}
	return n >= 4 && n >= len(q.word)-3 && n >= len(w)-4
}

// snippet returns the run of at most size words of text holding the most
// query words, matched words in [brackets], with "…" where text was cut.
func snippet(text string, qs []queryWord, size int) string {
	type span struct{ start, end int } // byte offsets of a word
	var spans []span
	start := -1
	for i, r := range text + " " {
		word := unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			spans = append(spans, span{start, i})
			start = -1
		}
	}
	hit := make([]bool, len(spans))
	for i, sp := range spans {
		for _, q := range qs {
			if q.matches(text[sp.start:sp.end]) {
				hit[i] = true
				break
			}
		}
	}
	// The window of size words with the most hits (the earliest on ties).
	from, best, count := 0, -1, 0
	for i := range spans {
		if hit[i] {
			count++
		}
		if i >= size && hit[i-size] {
			count--
		}
		if i >= size-1 || i == len(spans)-1 {
			if count > best {
				best, from = count, max(0, i-size+1)
			}
		}
	}
	to := min(len(spans), from+size)
	var b strings.Builder
	lo, hi := 0, len(text)
	if from > 0 {
		lo = spans[from].start
		b.WriteString("…")
	}
	if to < len(spans) {
		hi = spans[to-1].end
	}
	pos := lo
	for i := from; i < to; i++ {
		if hit[i] {
			b.WriteString(text[pos:spans[i].start])
			b.WriteString("[" + text[spans[i].start:spans[i].end] + "]")
			pos = spans[i].end
		}
	}
	b.WriteString(text[pos:hi])
	if hi < len(text) {
		b.WriteString("…")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
