package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// Search modes (Query.Mode).
const (
	ModeLexical  = "lexical"  // FTS5 words, BM25 and recency: as without an embedder
	ModeSemantic = "semantic" // cosine similarity of the vectors only
	ModeHybrid   = "hybrid"   // both, merged (see searchByMeaning)
)

// rrfK is the k of reciprocal rank fusion: a ranking's place r counts
// 1/(rrfK + r). 60 is the constant of Cormack et al., which most hybrid
// search engines use.
const rrfK = 60

// fuseDepth is how deep each ranking is read for fusion, at least.
const fuseDepth = 50

// mode resolves a Query.Mode for this store.
func (s *Store) mode(m string) (string, error) {
	switch m {
	case "":
		if s.opts.Embedder != nil {
			return ModeHybrid, nil
		}
		return ModeLexical, nil
	case ModeLexical:
		return m, nil
	case ModeSemantic, ModeHybrid:
		if s.opts.Embedder == nil {
			return "", fmt.Errorf("%w: %s search needs an embedder ([memory.embedder] in the config; see docs/memory.md)", ErrInvalid, m)
		}
		return m, nil
	}
	return "", fmt.Errorf("%w: unknown search mode %q (want lexical, semantic or hybrid)", ErrInvalid, m)
}

// searchByMeaning runs a semantic or hybrid search. The hybrid rule:
//
//  1. Memories that hold every word of the query come first, in the order
//     a lexical search gives them: exact words win where they match.
//  2. The others (memories holding some of the words, and those found by
//     meaning) follow by reciprocal rank fusion of the two rankings, each
//     read fuseDepth (or limit) deep:
//     fused = 1/(60 + lexical rank) + 1/(60 + semantic rank),
//     a ranking that did not find the memory adding nothing; ties go to
//     the newer memory.
//
// Every result carries its Scores. When the embedder fails, a hybrid
// search falls back to the lexical ranking (the results then have no
// semantic ranks) and a semantic search fails.
func (s *Store) searchByMeaning(ctx context.Context, mode, text string, terms []string, f Filter, limit int) ([]Result, error) {
	fail := func(err error) ([]Result, error) {
		return nil, fmt.Errorf("search memories in %s: %w", s.path, err)
	}
	depth := max(limit, fuseDepth)
	if mode == ModeSemantic {
		depth = limit // no fusion: the limit best are the limit best
	}
	// The lexical part runs beside the rest: while the embedder works (a
	// request to a model server: time spent waiting) and while the
	// semantic part scans and reads its vectors (which, on a machine
	// with cores to spare, leaves one free for much of its time).
	var lex []candidate
	var lexErr error
	lexDone := make(chan struct{})
	lctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		<-lexDone // never left writing lex after the return
	}()
	if mode == ModeHybrid && len(terms) > 0 {
		go func() {
			defer close(lexDone)
			lex, lexErr = s.lexical(lctx, terms, f, depth)
		}()
	} else {
		close(lexDone)
	}
	var sem []hit
	vs, err := s.opts.Embedder.Embed(ctx, []string{text})
	switch {
	case err != nil && mode == ModeSemantic:
		return fail(err)
	case err != nil:
		s.opts.Logger.Warn("memory: hybrid search without meaning: the embedder failed", "err", err)
	default:
		if sem, err = s.semantic(ctx, unit(vs[0]), f, depth); err != nil {
			return fail(err)
		}
	}
	<-lexDone
	if lexErr != nil {
		return fail(lexErr)
	}
	scores := map[int64]*Scores{}
	updated := map[int64]int64{}
	at := func(seq int64) *Scores {
		if sc, ok := scores[seq]; ok {
			return sc
		}
		sc := &Scores{}
		scores[seq] = sc
		return sc
	}
	for i, c := range lex {
		sc := at(c.seq)
		sc.Lexical, sc.LexicalRank, sc.Every = c.score, i+1, c.every
		updated[c.seq] = c.updated
	}
	for i, h := range sem {
		sc := at(h.seq)
		sc.Semantic, sc.SemanticRank = h.cos, i+1
		updated[h.seq] = h.updated
	}
	var hits []candidate
	for seq, sc := range scores {
		if mode == ModeHybrid {
			if sc.LexicalRank > 0 {
				sc.Fused += 1 / float64(rrfK+sc.LexicalRank)
			}
			if sc.SemanticRank > 0 {
				sc.Fused += 1 / float64(rrfK+sc.SemanticRank)
			}
		}
		hits = append(hits, candidate{seq: seq, updated: updated[seq], every: sc.Every, score: sc.Fused})
	}
	slices.SortFunc(hits, func(a, b candidate) int {
		sa, sb := scores[a.seq], scores[b.seq]
		if mode == ModeSemantic {
			return cmp.Or(cmp.Compare(sb.Semantic, sa.Semantic), cmp.Compare(b.seq, a.seq))
		}
		if a.every != b.every {
			if a.every {
				return -1
			}
			return 1
		}
		if a.every {
			return cmp.Compare(sa.LexicalRank, sb.LexicalRank)
		}
		return cmp.Or(cmp.Compare(sb.Fused, sa.Fused), cmp.Compare(b.seq, a.seq))
	})
	hits = hits[:min(len(hits), limit)]
	for i := range hits {
		if mode == ModeSemantic {
			hits[i].score = scores[hits[i].seq].Semantic
		}
	}
	res, err := s.fetch(ctx, terms, hits, scores)
	if err != nil {
		return fail(err)
	}
	return res, nil
}
