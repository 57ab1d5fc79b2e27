package memory

import (
	"fmt"
	"strings"
	"time"
)

// qFilter is a Qdrant filter: every must condition holds, at least one
// should condition (when any), no must_not condition. A condition is a
// field match (qCond) or a nested filter.
type qFilter struct {
	Must    []any `json:"must,omitempty"`
	Should  []any `json:"should,omitempty"`
	MustNot []any `json:"must_not,omitempty"`
}

// qCond is a field condition: the payload field key equals the value (for
// an array field, one of its elements does).
type qCond struct {
	Key   string `json:"key"`
	Match struct {
		Value string `json:"value"`
	} `json:"match"`
}

func match(key, value string) qCond {
	c := qCond{Key: key}
	c.Match.Value = value
	return c
}

// qdrantFilter is f as a Qdrant filter, the same rule as Filter.where:
//
//   - Workspace: should [workspace = W, scope = global], as a nested
//     filter so that it holds beside the other conditions;
//   - Viewer: must_not [scope = agent and not author = V];
//   - Author, Scope: must match; each tag: must match (tags is an array).
//
// nil when f filters nothing.
func qdrantFilter(f Filter) *qFilter {
	var q qFilter
	if f.Workspace != "" {
		q.Must = append(q.Must, qFilter{Should: []any{match("workspace", f.Workspace), match("scope", string(ScopeGlobal))}})
	}
	if f.Viewer != "" {
		q.MustNot = append(q.MustNot, qFilter{Must: []any{match("scope", string(ScopeAgent))}, MustNot: []any{match("author", f.Viewer)}})
	}
	if f.Author != "" {
		q.Must = append(q.Must, match("author", f.Author))
	}
	if f.Scope != "" {
		q.Must = append(q.Must, match("scope", string(f.Scope)))
	}
	for _, t := range NormalizeTags(f.Tags) {
		q.Must = append(q.Must, match("tags", t))
	}
	if len(q.Must) == 0 && len(q.MustNot) == 0 {
		return nil
	}
	return &q
}

// qdrantIndexes are the payload indexes relay makes: the fields its
// filters use, so that filtered search stays fast on large collections.
var qdrantIndexes = [][2]string{
	{"workspace", "keyword"}, {"scope", "keyword"}, {"author", "keyword"}, {"tags", "keyword"}, {"updated_ms", "integer"},
}

// pointID is a memory id as a Qdrant point id: the 8 base32 letters of
// the id are 40 bits, read as an unsigned integer.
func pointID(id string) (uint64, error) {
	if len(id) != idLen {
		return 0, fmt.Errorf("%w: %q is not a memory id", ErrInvalid, id)
	}
	var n uint64
	for i := 0; i < len(id); i++ {
		d := strings.IndexByte(idAlphabet, id[i])
		if d < 0 {
			return 0, fmt.Errorf("%w: %q is not a memory id", ErrInvalid, id)
		}
		n = n<<5 | uint64(d)
	}
	return n, nil
}

// payloadOf is the payload of m's point: everything a search result
// shows, so that a hit needs no other read, and the model whose vector
// the point holds.
func payloadOf(m Memory, model string) map[string]any {
	tags := m.Tags
	if tags == nil {
		tags = []string{}
	}
	return map[string]any{
		"id": m.ID, "text": m.Text, "tags": tags, "author": m.Author, "workspace": m.Workspace,
		"scope": string(m.Scope), "created": m.Created.UTC().Format(time.RFC3339Nano),
		"updated": m.Updated.UTC().Format(time.RFC3339Nano), "updated_ms": m.Updated.UnixMilli(), "model": model,
	}
}
