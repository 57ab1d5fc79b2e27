package opencode

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestDBReaderAnswering: the reader says a prompt waits for its answer
// while the session's newest message is a prompt or a reply being written,
// and tells the human's prompts from relay's ("[relay]" first).
func TestDBReaderAnswering(t *testing.T) {
	t.Parallel()
	dump, err := os.ReadFile("testdata/opencode-1.18.33-session.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "opencode.db")
	w, err := sql.Open("sqlite3", path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(string(dump)); err != nil {
		t.Fatal(err)
	}
	r, err := OpenDB(path, "/tmp/oc1/work", time.UnixMilli(1796480600000))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const ses = "ses_db9685d0affeV7ekVQOJhDJv4W"
	start := time.Now()
	ms := func(d time.Duration) string { return strconv.FormatInt(start.Add(d).UnixMilli(), 10) }
	for _, step := range []struct {
		name      string
		sql       []string
		answering bool
		human     bool // HumanPromptSince(start)
	}{
		{name: "answered"},
		{name: "relay's prompt", answering: true, sql: []string{
			`INSERT INTO message VALUES('msg_c1','` + ses + `',` + ms(0) + `,` + ms(0) + `,'{"role":"user"}')`,
			`INSERT INTO part VALUES('prt_c1','msg_c1','` + ses + `',` + ms(0) + `,` + ms(0) + `,'{"type":"text","text":"[relay] Message from agent Bob (id m1).\n│ hi"}')`,
		}},
		{name: "its reply being written", answering: true, sql: []string{
			`INSERT INTO message VALUES('msg_c2','` + ses + `',` + ms(time.Millisecond) + `,` + ms(time.Millisecond) + `,'{"role":"assistant"}')`,
		}},
		{name: "its reply written", sql: []string{
			`UPDATE message SET data='{"role":"assistant","time":{"completed":1}}' WHERE id='msg_c2'`,
		}},
		{name: "the human's prompt", answering: true, human: true, sql: []string{
			`INSERT INTO message VALUES('msg_c3','` + ses + `',` + ms(2*time.Millisecond) + `,` + ms(2*time.Millisecond) + `,'{"role":"user"}')`,
			`INSERT INTO part VALUES('prt_c3','msg_c3','` + ses + `',` + ms(2*time.Millisecond) + `,` + ms(2*time.Millisecond) + `,'{"type":"text","text":"kick off"}')`,
		}},
		{name: "its reply failed", human: true, sql: []string{
			`INSERT INTO message VALUES('msg_c4','` + ses + `',` + ms(3*time.Millisecond) + `,` + ms(3*time.Millisecond) + `,'{"role":"assistant","error":{"name":"APIError"}}')`,
		}},
	} {
		for _, q := range step.sql {
			if _, err := w.Exec(q); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
		}
		if _, _, err := r.Read(false); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := r.Answering(); got != step.answering {
			t.Errorf("%s: Answering %v, want %v", step.name, got, step.answering)
		}
		if got := r.HumanPromptSince(start); got != step.human {
			t.Errorf("%s: HumanPromptSince %v, want %v", step.name, got, step.human)
		}
	}
	if r.HumanPromptSince(start.Add(time.Second)) {
		t.Error("a prompt of the human's stored before the Enter counts")
	}
}
