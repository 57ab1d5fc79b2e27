package memory

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable time source for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// openTest opens a store in a fresh temporary folder, closed with the test.
func openTest(t testing.TB, c *clock) *Store {
	t.Helper()
	opts := &Options{}
	if c != nil {
		opts.Now = c.Now
	}
	st, err := Open(filepath.Join(t.TempDir(), "memory.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func mustSave(t testing.TB, st API, m Memory) Memory {
	t.Helper()
	saved, _, err := st.Save(context.Background(), m)
	if err != nil {
		t.Fatalf("save %q: %v", m.Text, err)
	}
	return saved
}

func texts[T Memory | Result](items []T) []string {
	var out []string
	for _, it := range items {
		switch v := any(it).(type) {
		case Memory:
			out = append(out, v.Text)
		case Result:
			out = append(out, v.Text)
		}
	}
	return out
}

func TestSaveSearchGetForgetList(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	st := openTest(t, c)
	prisma := mustSave(t, st, Memory{Text: "This project uses Prisma for database access", Author: "Alice", Workspace: "w"})
	c.Advance(time.Minute)
	mustSave(t, st, Memory{Text: "Deployments go through the staging cluster first", Author: "Bob", Workspace: "w", Tags: []string{"#Deploy", "ops"}})
	c.Advance(time.Minute)
	mustSave(t, st, Memory{Text: "Run database migrations with make migrate", Author: "Bob", Workspace: "w"})

	if len(prisma.ID) != 8 || prisma.Created.IsZero() || !prisma.Created.Equal(prisma.Updated) {
		t.Fatalf("saved memory = %+v, want an 8-letter id and equal times", prisma)
	}
	res, err := st.Search(ctx, Query{Text: "prisma"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].ID != prisma.ID || !strings.Contains(res[0].Snippet, "[Prisma]") || res[0].Score <= 0 {
		t.Fatalf("search prisma = %+v", res)
	}
	// Porter stemming: "migrating" finds "migrations"; "deployment" finds
	// "Deployments"; tags are searched too.
	for q, want := range map[string]string{
		"migrating":  "Run database migrations with make migrate",
		"deployment": "Deployments go through the staging cluster first",
		"ops":        "Deployments go through the staging cluster first",
	} {
		res, err := st.Search(ctx, Query{Text: q})
		if err != nil || len(res) != 1 || res[0].Text != want {
			t.Errorf("search %q = %v, %v; want [%q]", q, texts(res), err, want)
		}
	}
	got, err := st.Get(ctx, strings.ToUpper(prisma.ID))
	if err != nil || got.Text != prisma.Text {
		t.Fatalf("get %s = %+v, %v", prisma.ID, got, err)
	}
	list, err := st.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Run database migrations with make migrate", "Deployments go through the staging cluster first", prisma.Text}; !slices.Equal(texts(list), want) {
		t.Fatalf("list = %q, want newest first %q", texts(list), want)
	}
	if list[1].Tags == nil || !slices.Equal(list[1].Tags, []string{"deploy", "ops"}) {
		t.Errorf("tags = %q, want [deploy ops]", list[1].Tags)
	}
	gone, err := st.Forget(ctx, prisma.ID)
	if err != nil || gone.ID != prisma.ID {
		t.Fatalf("forget = %+v, %v", gone, err)
	}
	if _, err := st.Forget(ctx, prisma.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("forget twice: err = %v, want ErrNotFound", err)
	}
	if _, err := st.Get(ctx, "nonsense!"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get bad id: err = %v, want ErrNotFound", err)
	}
	if res, _ := st.Search(ctx, Query{Text: "prisma"}); len(res) != 0 {
		t.Fatalf("forgotten memory still found: %+v", res)
	}
}

func TestSaveRejectsBadInput(t *testing.T) {
	st := openTest(t, nil)
	for _, m := range []Memory{
		{Text: "  \n "},
		{Text: strings.Repeat("x", MaxTextBytes+1)},
		{Text: "x", Scope: "team"},
		{Text: "x", Scope: ScopeAgent},
	} {
		if _, _, err := st.Save(context.Background(), m); !errors.Is(err, ErrInvalid) {
			t.Errorf("save %.20q scope %q: err = %v, want ErrInvalid", m.Text, m.Scope, err)
		}
	}
}

func TestSaveDeduplicates(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	st := openTest(t, c)
	first, created, err := st.Save(ctx, Memory{Text: "Use pnpm, not npm", Workspace: "w", Tags: []string{"js"}})
	if err != nil || !created {
		t.Fatalf("first save: created=%v err=%v", created, err)
	}
	c.Advance(time.Hour)
	again, created, err := st.Save(ctx, Memory{Text: "  use PNPM,   not npm\n", Workspace: "w", Tags: []string{"build"}})
	if err != nil || created {
		t.Fatalf("second save: created=%v err=%v, want the existing memory", created, err)
	}
	if again.ID != first.ID || !again.Updated.Equal(first.Updated.Add(time.Hour)) || !again.Created.Equal(first.Created) {
		t.Fatalf("second save = %+v, want id %s with updated bumped by 1h", again, first.ID)
	}
	if !slices.Equal(again.Tags, []string{"build", "js"}) {
		t.Errorf("tags after re-save = %q, want merged [build js]", again.Tags)
	}
	// The same text in another scope or workspace is another memory.
	for _, m := range []Memory{
		{Text: "Use pnpm, not npm", Workspace: "other"},
		{Text: "Use pnpm, not npm", Workspace: "w", Scope: ScopeGlobal},
		{Text: "Use pnpm, not npm", Workspace: "w", Scope: ScopeAgent, Author: "Alice"},
	} {
		if _, created, err := st.Save(ctx, m); err != nil || !created {
			t.Errorf("save in %s/%s: created=%v err=%v, want a new memory", m.Scope, m.Workspace, created, err)
		}
	}
	all, _ := st.List(ctx, Filter{})
	if len(all) != 4 {
		t.Fatalf("have %d memories, want 4: %+v", len(all), all)
	}
}

func TestScopesAndFilters(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, newClock())
	for _, m := range []Memory{
		{Text: "alpha workspace note", Author: "Alice", Workspace: "w1", Tags: []string{"db"}},
		{Text: "alpha private note", Author: "Alice", Workspace: "w1", Scope: ScopeAgent},
		{Text: "alpha bob private", Author: "Bob", Workspace: "w1", Scope: ScopeAgent},
		{Text: "alpha global note", Author: "Carol", Workspace: "w2", Scope: ScopeGlobal, Tags: []string{"db", "ops"}},
		{Text: "alpha other workspace", Author: "Carol", Workspace: "w2"},
	} {
		mustSave(t, st, m)
	}
	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{"all", Filter{}, []string{"alpha workspace note", "alpha private note", "alpha bob private", "alpha global note", "alpha other workspace"}},
		{"workspace sees global", Filter{Workspace: "w1"}, []string{"alpha workspace note", "alpha private note", "alpha bob private", "alpha global note"}},
		{"viewer hides others' private", Filter{Workspace: "w1", Viewer: "Alice"}, []string{"alpha workspace note", "alpha private note", "alpha global note"}},
		{"author", Filter{Author: "Carol"}, []string{"alpha global note", "alpha other workspace"}},
		{"scope", Filter{Scope: ScopeAgent}, []string{"alpha private note", "alpha bob private"}},
		{"one tag", Filter{Tags: []string{"DB"}}, []string{"alpha workspace note", "alpha global note"}},
		{"two tags", Filter{Tags: []string{"db", "#ops"}}, []string{"alpha global note"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := st.Search(ctx, Query{Text: "alpha", Filter: tt.f})
			if err != nil {
				t.Fatal(err)
			}
			got := texts(res)
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("search = %q, want %q", got, want)
			}
			list, err := st.List(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != len(tt.want) {
				t.Errorf("list = %q, want %d memories", texts(list), len(tt.want))
			}
		})
	}
	res, _ := st.Search(ctx, Query{Text: "alpha", Filter: Filter{Limit: 2}})
	list, _ := st.List(ctx, Filter{Limit: 2})
	if len(res) != 2 || len(list) != 2 {
		t.Errorf("limit 2: search %q, list %q", texts(res), texts(list))
	}
}

func TestSearchRanking(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	st := openTest(t, c)
	mustSave(t, st, Memory{Text: "redis cache keys expire after one hour"})
	c.Advance(90 * 24 * time.Hour)
	mustSave(t, st, Memory{Text: "redis cache keys are prefixed by tenant"})
	mustSave(t, st, Memory{Text: "the cache warms up on boot"})

	// Equally relevant: the newer wins.
	res, err := st.Search(ctx, Query{Text: "redis keys"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"redis cache keys are prefixed by tenant", "redis cache keys expire after one hour"}; !slices.Equal(texts(res), want) {
		t.Fatalf("search = %q, want newer first %q", texts(res), want)
	}
	if res[0].Score <= res[1].Score {
		t.Errorf("scores %v, %v: want decreasing", res[0].Score, res[1].Score)
	}
	// Memories with every word come before those with some of them.
	res, _ = st.Search(ctx, Query{Text: "cache boot"})
	if got := texts(res); len(got) != 3 || got[0] != "the cache warms up on boot" {
		t.Fatalf("search cache boot = %q, want the one with both words first, then the others", got)
	}
	// Re-saving bumps a memory back up.
	c.Advance(time.Hour)
	mustSave(t, st, Memory{Text: "Redis cache keys expire after one hour"})
	res, _ = st.Search(ctx, Query{Text: "redis keys"})
	if res[0].Text != "redis cache keys expire after one hour" {
		t.Fatalf("after re-save: %q, want the re-saved memory first", texts(res))
	}
	// An empty (or all-punctuation) query lists the newest.
	res, err = st.Search(ctx, Query{Text: " * ", Filter: Filter{Limit: 1}})
	if err != nil || len(res) != 1 || res[0].Text != "redis cache keys expire after one hour" {
		t.Fatalf("empty query = %q, %v", texts(res), err)
	}
	// Prefixes and phrases.
	for q, n := range map[string]int{"redi*": 2, `"keys expire"`: 1, `"expire keys"`: 0, "warm*": 1} {
		res, err := st.Search(ctx, Query{Text: q})
		if err != nil || len(res) != n {
			t.Errorf("search %s = %q, %v; want %d", q, texts(res), err, n)
		}
	}
}

// v1Schema is version 1 of the schema, written here as raw SQL, so that the
// migration test does not depend on the code it tests.
const v1Schema = `
CREATE TABLE memories (
	seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, text TEXT NOT NULL,
	author TEXT NOT NULL DEFAULT '', workspace TEXT NOT NULL DEFAULT '',
	scope TEXT NOT NULL DEFAULT 'workspace', created_ms INTEGER NOT NULL);
CREATE VIRTUAL TABLE memories_fts USING fts5(text, content='memories', content_rowid='seq', tokenize='porter unicode61');
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
	INSERT INTO memories_fts(rowid, text) VALUES (new.seq, new.text); END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
	INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.seq, old.text); END;
INSERT INTO memories (id, text, author, workspace, scope, created_ms) VALUES
	('aaaaaaaa', 'Tests need docker running', 'Alice', 'w', 'workspace', 1000),
	('bbbbbbbb', 'tests need  Docker running', 'Bob', 'w', 'workspace', 5000),
	('cccccccc', 'The API listens on port 8080', 'Bob', 'w', 'global', 2000);
PRAGMA user_version = 1;
`

func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(v1Schema); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	st, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var v int
	st.db.QueryRow(`PRAGMA user_version`).Scan(&v)
	if v != schemaVersion() {
		t.Fatalf("user_version = %d, want %d", v, schemaVersion())
	}
	all, err := st.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	// The two spellings of the docker note were one memory: the oldest id
	// stays, with the newest time.
	if len(all) != 2 || all[0].ID != "aaaaaaaa" || all[0].Updated.UnixMilli() != 5000 || all[0].Created.UnixMilli() != 1000 {
		t.Fatalf("after migration: %+v", all)
	}
	res, err := st.Search(ctx, Query{Text: "listening ports"})
	if err != nil || len(res) != 1 || res[0].ID != "cccccccc" {
		t.Fatalf("search after migration = %+v, %v", res, err)
	}
	// New features work on the migrated file: de-duplication and tags.
	m, created, err := st.Save(ctx, Memory{Text: "The API listens on port 8080", Scope: ScopeGlobal, Tags: []string{"net"}})
	if err != nil || created || m.ID != "cccccccc" {
		t.Fatalf("re-save after migration = %+v, %v, %v", m, created, err)
	}
	if res, _ := st.Search(ctx, Query{Text: "net"}); len(res) != 1 {
		t.Fatalf("tag search after migration = %+v", res)
	}
}

func TestOpenNewerSchemaFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	raw, _ := sql.Open("sqlite3", path)
	if _, err := raw.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, err := Open(path, nil)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("err = %v, want a newer-schema error naming %s", err, path)
	}
}

func TestOpenBadFiles(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, bytes.Repeat([]byte("this is not sqlite\n"), 300), 0o600)
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, nil, 0o600)
	tests := []struct {
		name, path, want string
	}{
		{"garbage", garbage, "open memory store " + garbage + ": file is not a database"},
		{"a directory", dir, "open memory store " + dir + ": is a directory"},
		{"folder is a file", filepath.Join(notDir, "memory.db"), "open memory store " + filepath.Join(notDir, "memory.db") + ": mkdir " + notDir + ": not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := Open(tt.path, nil)
			if err == nil {
				st.Close()
				t.Fatal("opened")
			}
			if err.Error() != tt.want {
				t.Fatalf("err = %q\nwant  %q", err, tt.want)
			}
		})
	}
	if got, _ := os.ReadFile(garbage); !bytes.HasPrefix(got, []byte("this is not sqlite")) {
		t.Error("the garbage file was changed")
	}
}

func TestLockedFileReportedClearly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	st, err := Open(path, &Options{BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Another connection (as another process would) holds the write lock.
	raw, err := sql.Open("sqlite3", path+"?_txlock=exclusive")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	_, _, err = st.Save(ctx, Memory{Text: "blocked"})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "database is locked") {
		t.Fatalf("save while locked: err = %v, want 'database is locked' naming %s", err, path)
	}
	tx.Rollback()
	if _, _, err := st.Save(ctx, Memory{Text: "unblocked"}); err != nil {
		t.Fatalf("save after the lock went: %v", err)
	}
}

func TestReadOnlyFileReportedClearly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores file modes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.db")
	st, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	os.Chmod(path, 0o400)
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	st, err = Open(path, nil)
	if err == nil {
		_, _, err = st.Save(context.Background(), Memory{Text: "x"})
		st.Close()
	}
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want an error naming %s", err, path)
	}
}

// childEnv makes the test binary act as one writer process of
// TestConcurrentProcesses.
const childEnv = "RELAY_MEMORY_TEST_CHILD"

func TestConcurrentProcesses(t *testing.T) {
	if spec := os.Getenv(childEnv); spec != "" {
		concurrentChild(t, spec)
		return
	}
	const procs, each = 4, 50
	path := filepath.Join(t.TempDir(), "memory.db") // created by the children, racing
	var wg sync.WaitGroup
	errs := make([]error, procs)
	outs := make([][]byte, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentProcesses$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|%d", childEnv, path, p, each))
			outs[p], errs[p] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for p := range procs {
		if errs[p] != nil {
			t.Errorf("child %d: %v\n%s", p, errs[p], outs[p])
		}
	}
	st, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all, err := st.List(context.Background(), Filter{Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != procs*each+each {
		t.Fatalf("have %d memories, want %d (each writer's own and one copy of the common ones)", len(all), procs*each+each)
	}
	res, _ := st.Search(context.Background(), Query{Text: "writer 3 note 49"})
	if len(res) == 0 || res[0].Text != "writer 3 note 49" {
		t.Fatalf("search = %q", texts(res))
	}
}

func concurrentChild(t *testing.T, spec string) {
	parts := strings.Split(spec, "|")
	each, _ := strconv.Atoi(parts[2])
	st, err := Open(parts[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range each {
		text := fmt.Sprintf("writer %s note %d", parts[1], i)
		if _, _, err := st.Save(context.Background(), Memory{Text: text, Tags: []string{"w" + parts[1]}}); err != nil {
			t.Fatal(err)
		}
		// Every process also saves the same shared text: de-duplicated
		// across processes, never a second copy nor a failure.
		if _, _, err := st.Save(context.Background(), Memory{Text: fmt.Sprintf("common note %d", i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Search(context.Background(), Query{Text: "writer note"}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSearchBeyondWindows: in a store with more matches than the search
// windows, rare words are still found, every-term matches still come
// first, and a large limit widens the window.
func TestSearchBeyondWindows(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	st := openTest(t, c)
	ms := []Memory{{Text: "common words with a zebra inside"}}
	for i := range 2 * searchWindow {
		ms = append(ms, Memory{Text: fmt.Sprintf("common words number %d", i), Workspace: []string{"a", "b"}[i%2]})
	}
	if _, _, err := st.ImportMemories(ctx, ms); err != nil {
		t.Fatal(err)
	}
	for q, first := range map[string]string{"zebra": "common words with a zebra inside", "zebra common": "common words with a zebra inside", "giraffe zebra": "common words with a zebra inside"} {
		res, err := st.Search(ctx, Query{Text: q})
		if err != nil || len(res) == 0 || res[0].Text != first {
			t.Errorf("search %q = %q, %v; want %q first", q, texts(res), err, first)
		}
	}
	res, err := st.Search(ctx, Query{Text: "common", Filter: Filter{Limit: 2*searchWindow + 1}})
	if err != nil || len(res) != 2*searchWindow+1 {
		t.Errorf("search common with a large limit: %d results, %v; want %d", len(res), err, 2*searchWindow+1)
	}
	res, _ = st.Search(ctx, Query{Text: "common", Filter: Filter{Workspace: "b", Limit: 5}})
	if len(res) != 5 || res[0].Workspace != "b" {
		t.Errorf("filtered search = %+v", res)
	}
}
