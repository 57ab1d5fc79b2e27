package memory

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	src := openTest(t, c)
	for _, m := range []Memory{
		{Text: "first note", Author: "Alice", Workspace: "w", Tags: []string{"a"}},
		{Text: "private note", Author: "Bob", Workspace: "w", Scope: ScopeAgent},
		{Text: "global note with \"quotes\", <html> & ünïcode\nand a second line", Scope: ScopeGlobal},
	} {
		mustSave(t, src, m)
		c.Advance(time.Hour)
	}
	var exp bytes.Buffer
	if err := src.Export(ctx, &exp); err != nil {
		t.Fatal(err)
	}
	dst := openTest(t, nil)
	added, skipped, err := dst.Import(ctx, bytes.NewReader(exp.Bytes()))
	if err != nil || added != 3 || skipped != 0 {
		t.Fatalf("import = %d, %d, %v", added, skipped, err)
	}
	var again bytes.Buffer
	if err := dst.Export(ctx, &again); err != nil {
		t.Fatal(err)
	}
	if again.String() != exp.String() {
		t.Fatalf("export after import differs:\n%s\nwant\n%s", again.String(), exp.String())
	}
	if !strings.Contains(exp.String(), `<html> & ünïcode\nand`) {
		t.Errorf("export escapes what it need not: %s", exp.String())
	}
	// Importing again adds nothing; the imported memories are searchable.
	if added, skipped, err := dst.Import(ctx, bytes.NewReader(exp.Bytes())); err != nil || added != 0 || skipped != 3 {
		t.Fatalf("second import = %d, %d, %v", added, skipped, err)
	}
	if res, _ := dst.Search(ctx, Query{Text: "ünïcode"}); len(res) != 1 {
		t.Fatalf("imported memory not searchable: %+v", res)
	}
}

func TestImportRejectsBadLines(t *testing.T) {
	ctx := context.Background()
	tests := []struct{ name, in, want string }{
		{"not json", "{\"text\":\"ok\"}\n\nnope\n", "line 3: invalid character"},
		{"no text", `{"id":"abcdefgh","text":"  "}`, "line 1: invalid memory request: no text"},
		{"unknown field", `{"text":"x","colour":"red"}`, `line 1: json: unknown field "colour"`},
		{"bad scope", `{"text":"x","scope":"team"}`, `unknown scope "team"`},
		{"bad id", `{"id":"not-an-id","text":"x"}`, `bad id "not-an-id"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openTest(t, nil)
			_, _, err := st.Import(ctx, strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if all, _ := st.List(ctx, Filter{}); len(all) != 0 {
				t.Errorf("a failed import left %d memories", len(all))
			}
		})
	}
	st := openTest(t, nil)
	_, _, err := st.Import(ctx, strings.NewReader(`{"text":"x","scope":"team"}`))
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("err = %v, want ErrInvalid", err)
	}
}

func TestSnippet(t *testing.T) {
	long := "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen migrations here"
	tests := []struct{ text, query, want string }{
		{"Run database migrations with make migrate", "migrating", "Run database [migrations] with make [migrate]"},
		{"Deployments go through staging", "deploy*", "[Deployments] go through staging"},
		{"multi-agent setups", "multi-agent", "[multi]-[agent] setups"},
		{long, "migration", "…four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen [migrations]…"},
		{long, "one", "[one] two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen…"},
		{"no match at all", "zebra", "no match at all"},
	}
	for _, tt := range tests {
		if got := snippet(tt.text, termWords(queryTerms(tt.query)), snippetWords); got != tt.want {
			t.Errorf("snippet(%.20q, %q) =\n  %q\nwant\n  %q", tt.text, tt.query, got, tt.want)
		}
	}
}
