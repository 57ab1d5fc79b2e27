package memory

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHandleVerbs(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, nil)
	ids := regexp.MustCompile(`\[([0-9a-z]{8})\]`)

	reply, err := Handle(ctx, st, "Alice", "w", "save", "This project uses Prisma for database access #db #orm")
	if err != nil || !strings.HasPrefix(reply, "memory saved as [") {
		t.Fatalf("save: %q, %v", reply, err)
	}
	id := ids.FindStringSubmatch(reply)[1]
	m, _ := st.Get(ctx, id)
	if m.Text != "This project uses Prisma for database access" || !slices.Equal(m.Tags, []string{"db", "orm"}) || m.Author != "Alice" || m.Workspace != "w" {
		t.Fatalf("saved %+v", m)
	}
	if reply, _ := Handle(ctx, st, "Bob", "w", "SAVE", "this project uses prisma for database access"); reply != "memory already saved as ["+id+"]; marked recent" {
		t.Errorf("second save: %q", reply)
	}
	Handle(ctx, st, "Bob", "w", "save", "Bob's own scratch note about prisma")
	st.Save(ctx, Memory{Text: "Carol's private prisma note", Author: "Carol", Workspace: "w", Scope: ScopeAgent})
	st.Save(ctx, Memory{Text: "prisma in another workspace", Workspace: "other"})

	reply, err = Handle(ctx, st, "Bob", "w", "search", "Prisma databases")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(reply, `memory search "Prisma databases": 2 results`) || !strings.Contains(reply, "- ["+id+"] This project uses Prisma for database access (now, Alice) #db #orm") ||
		strings.Contains(reply, "Carol") || strings.Contains(reply, "another workspace") {
		t.Fatalf("search reply:\n%s", reply)
	}
	reply, _ = Handle(ctx, st, "Bob", "w", "list", "")
	if !strings.HasPrefix(reply, "memory list: 2 newest\n- [") || strings.Count(reply, "\n") != 2 {
		t.Fatalf("list reply:\n%s", reply)
	}
	if reply, _ := Handle(ctx, st, "Bob", "w", "list", "1"); strings.Count(reply, "\n") != 1 {
		t.Fatalf("list 1 reply:\n%s", reply)
	}
	if reply, _ := Handle(ctx, st, "Bob", "w", "get", id); !strings.Contains(reply, "This project uses Prisma") {
		t.Fatalf("get reply: %q", reply)
	}
	reply, err = Handle(ctx, st, "Bob", "w", "forget", strings.ToUpper(id))
	if err != nil || reply != "memory forgot ["+id+"] This project uses Prisma for database access" {
		t.Fatalf("forget: %q, %v", reply, err)
	}

	carol, _ := st.List(ctx, Filter{Author: "Carol"})
	tests := []struct {
		verb, body string
		want       error
		contains   string
	}{
		{"forget", id, ErrNotFound, "memory forget failed: memory not found: no memory has id " + id},
		{"forget", carol[0].ID, ErrNotFound, "no memory has id"}, // Carol's private one
		{"forget", "", ErrInvalid, "write @memory:forget ID"},
		{"save", "  #only #tags ", ErrInvalid, "nothing to save"},
		{"search", "?!", ErrInvalid, "no words to search for"},
		{"list", "many", ErrInvalid, `"many" is not a count`},
		{"remember", "x", ErrInvalid, `unknown verb "remember"; the verbs are @memory:save`},
	}
	for _, tt := range tests {
		reply, err := Handle(ctx, st, "Bob", "w", tt.verb, tt.body)
		if !errors.Is(err, tt.want) || !strings.Contains(reply, tt.contains) || strings.Contains(reply, "\n") {
			t.Errorf("%s %q: reply %q, err %v; want %v and a one-line notice containing %q", tt.verb, tt.body, reply, err, tt.want, tt.contains)
		}
	}
}

func TestHandleOverTheWire(t *testing.T) {
	url := startNATS(t)
	_, newClient := serveTest(t, url, "relay.memory")
	ctx := context.Background()
	if _, err := Handle(ctx, newClient(t), "Alice", "w", "save", "Deploys need the VPN"); err != nil {
		t.Fatal(err)
	}
	reply, err := Handle(ctx, newClient(t), "Bob", "w", "search", "deploy vpn")
	if err != nil || !strings.Contains(reply, "Deploys need the VPN (now, Alice)") {
		t.Fatalf("search over the wire: %q, %v", reply, err)
	}
	reply, err = Handle(ctx, newClient(t), "Bob", "w", "forget", "00000000")
	if !errors.Is(err, ErrNotFound) || !strings.HasPrefix(reply, "memory forget failed") {
		t.Fatalf("forget unknown over the wire: %q, %v", reply, err)
	}
}

func TestSplitTags(t *testing.T) {
	tests := []struct {
		in   string
		text string
		tags []string
	}{
		{"Use pnpm #build #JS", "Use pnpm", []string{"build", "js"}},
		{"Fixed in #42", "Fixed in #42", nil},
		{"#ops deploys go through staging", "#ops deploys go through staging", nil},
		{"multi\nline #a", "multi\nline", []string{"a"}},
		{"#only #tags", "", []string{"only", "tags"}},
		{"no tags", "no tags", nil},
		{"c# is fine #dotnet", "c# is fine", []string{"dotnet"}},
	}
	for _, tt := range tests {
		text, tags := SplitTags(tt.in)
		if text != tt.text || !slices.Equal(tags, tt.tags) {
			t.Errorf("SplitTags(%q) = %q, %q; want %q, %q", tt.in, text, tags, tt.text, tt.tags)
		}
	}
}

func TestFormatCapsAndAges(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var rs []Result
	for i := range 30 {
		rs = append(rs, Result{Memory: Memory{ID: fmt.Sprintf("id%06d", i), Text: strings.Repeat("long words here ", 30), Updated: now.Add(-time.Duration(i) * 24 * time.Hour)}})
	}
	out := FormatResults("long", rs, now)
	if len(out) > MaxReplyBytes {
		t.Fatalf("reply is %d bytes, cap is %d", len(out), MaxReplyBytes)
	}
	shown := strings.Count(out, "\n- [")
	if !strings.HasSuffix(out, fmt.Sprintf("(%d more left out; search with more words to narrow)", 30-shown)) || shown == 0 {
		t.Fatalf("reply does not count what it left out:\n%s", out)
	}
	for d, want := range map[time.Duration]string{0: "now", 5 * time.Minute: "5m", 3 * time.Hour: "3h", 3 * 24 * time.Hour: "3d", 800 * 24 * time.Hour: "2y"} {
		if got := Age(d); got != want {
			t.Errorf("Age(%v) = %q, want %q", d, got, want)
		}
	}
	if got := oneLine("héllo wörld", 9); got != "héllo…" || len(got) > 9 {
		t.Errorf("oneLine cut = %q", got)
	}
	if got := FormatResults("x", nil, now); got != `memory search "x": nothing found` {
		t.Errorf("no results: %q", got)
	}
}

func TestRelevant(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	st := openTest(t, c)
	for _, m := range []Memory{
		{Text: "The billing service retries webhooks three times", Workspace: "w"},
		{Text: "Billing API keys live in vault", Workspace: "w"},
		{Text: "Lunch is at noon", Workspace: "w"},
		{Text: "My private billing scratch", Workspace: "w", Scope: ScopeAgent, Author: "A"},
		{Text: "billing elsewhere", Workspace: "other"},
	} {
		mustSave(t, st, m)
		c.Advance(time.Minute)
	}
	ms, err := Relevant(ctx, st, "w", "/home/me/src/billing-service", 3)
	if err != nil {
		t.Fatal(err)
	}
	got := texts(ms)
	if len(got) != 3 || got[0] != "The billing service retries webhooks three times" || got[2] != "Lunch is at noon" {
		t.Fatalf("relevant = %q", got)
	}
	if out := FormatRelevant(ms, c.Now()); !strings.HasPrefix(out, "Memories your team saved") || strings.Count(out, "\n- [") != 3 {
		t.Fatalf("FormatRelevant:\n%s", out)
	}
}
