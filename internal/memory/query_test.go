package memory

import (
	"context"
	"strings"
	"testing"
)

// hostileQueries are user texts that are FTS5 or SQL syntax, or broken
// text. None may raise an error.
var hostileQueries = []string{
	"", " ", "\t\n", "multi-agent", "don't", `"quotes"`, `"unbalanced`, `a "b" "c`, `""`, `"""`,
	"*", "**", "a*", "*a", "a**", "(*", "NEAR", "NEAR(a b)", "NEAR/3", "a NEAR b", "AND", "OR", "NOT",
	"a AND", "OR b", "NOT NOT", "a OR OR b", "(", ")", "(a", "a)", "((a OR b)", ":", "text:", "text:prisma",
	"tags:ops", "{text tags}:x", "-x", "^", "^prisma", "+", "a + b", "'", "''", "'; DROP TABLE memories; --",
	"\x00", "a\x00b", "\x1b[31mred\x1b[0m", "\r\n", "\u200b", "\ufeff", "\xff\xfe", "日本語のテスト", "naïve café",
	"🙂 emoji", "e\u0301", "%", "_", "\\", "\\\"", "a:b:c", "C++", "c#", ".NET", "x86_64", "v1.2.3",
	"rm -rf /", "$(whoami)", "`id`", "@memory:save", "#tag", "a|b", "a&b", "~a", "a=b", "[a]", "{a}",
	strings.Repeat("word ", 500), strings.Repeat("(", 1000), strings.Repeat(`"`, 999),
}

func TestHostileQueries(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, nil)
	mustSave(t, st, Memory{Text: "multi-agent setups don't share a terminal; \"quotes\" and NEAR AND OR NOT are words", Tags: []string{"ops"}})
	mustSave(t, st, Memory{Text: "The text: column holds C++ and .NET notes for x86_64, v1.2.3"})
	for _, q := range hostileQueries {
		for _, f := range []Filter{{}, {Workspace: "w", Viewer: "a", Tags: []string{q}}} {
			if _, err := st.Search(ctx, Query{Text: q, Filter: f}); err != nil {
				t.Errorf("search %.40q: %v", q, err)
			}
		}
	}
	// And the ones that are words find what holds those words.
	for q, n := range map[string]int{"multi-agent": 1, "don't": 1, `"quotes"`: 1, "NEAR": 1, "AND OR": 2, "text:": 1, "C++": 1, "x86_64": 1, "v1.2.3": 1, `"unbalanced`: 0} {
		res, err := st.Search(ctx, Query{Text: q})
		if err != nil || len(res) != n {
			t.Errorf("search %q = %d results (%v), want %d", q, len(res), err, n)
		}
	}
}

func TestFTSQuery(t *testing.T) {
	tests := []struct{ in, all, any string }{
		{"prisma", `"prisma"`, `"prisma"`},
		{"multi-agent don't", `"multi agent" "don t"`, `"multi agent" OR "don t"`},
		{`say "hello world" now`, `"say" "hello world" "now"`, `"say" OR "hello world" OR "now"`},
		{`"unbalanced quote`, `"unbalanced" "quote"`, `"unbalanced" OR "quote"`},
		{"deplo* * (*", `"deplo" *`, `"deplo" *`},
		{"NEAR(a OR b)", `"NEAR a" "OR" "b"`, `"NEAR a" OR "OR" OR "b"`},
		{"", "", ""},
		{"*** --- ()", "", ""},
	}
	for _, tt := range tests {
		all, anyTerm, _ := ftsQuery(tt.in)
		if all != tt.all || anyTerm != tt.any {
			t.Errorf("ftsQuery(%q) = %q, %q; want %q, %q", tt.in, all, anyTerm, tt.all, tt.any)
		}
	}
}

// FuzzQuery checks that no user text makes Search fail.
func FuzzQuery(f *testing.F) {
	for _, q := range hostileQueries {
		f.Add(q)
	}
	st := openTest(f, nil)
	mustSave(f, st, Memory{Text: "multi-agent setups don't share a terminal"})
	f.Fuzz(func(t *testing.T, q string) {
		all, anyTerm, n := ftsQuery(q)
		if n > maxQueryTerms || (n == 0) != (all == "") || (n == 0) != (anyTerm == "") {
			t.Fatalf("ftsQuery(%q) = %q, %q, %d", q, all, anyTerm, n)
		}
		if _, err := st.Search(context.Background(), Query{Text: q}); err != nil {
			t.Fatalf("search %q (fts %q): %v", q, all, err)
		}
	})
}
