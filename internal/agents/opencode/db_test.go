package opencode

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDBReader reads a session OpenCode 1.18.33 stored against the mock
// model (testdata: its session, message and part rows as SQL): the prompt
// and the reply's exact text once each; an assistant message still being
// written waits, and holds back the ones after it, until it is completed.
func TestDBReader(t *testing.T) {
	t.Parallel()
	dump, err := os.ReadFile("testdata/opencode-1.18.33-session.sql")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "opencode.db")
	if _, err := OpenDB(path, "/tmp/oc1/work", time.UnixMilli(0)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no database: %v, want fs.ErrNotExist", err)
	}
	w, err := sql.Open("sqlite3", path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(`CREATE TABLE x(y)`); err != nil {
		t.Fatal(err)
	}
	r, err := OpenDB(path, "/tmp/oc1/work", time.UnixMilli(1796480600000))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.findSession(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no tables yet: %v, want fs.ErrNotExist", err)
	}
	if _, err := w.Exec(string(dump)); err != nil {
		t.Fatal(err)
	}
	if err := r.findSession(); err != nil {
		t.Fatal(err)
	}
	replies, prompts, err := r.Read(false)
	if err != nil || len(prompts) != 1 || prompts[0] != "fx-single" || len(replies) != 1 {
		t.Fatalf("first read: %q, %q, %v", replies, prompts, err)
	}
	const want = "Sending the report.\n\n@relay:Bob The nightly build failed in three places: the auth service tests time out after 30 seconds, the billing migration leaves a lock on the invoices table, and the web bundle is 12% over its size budget; please take the first two and tell me when they are fixed.\n\nDone."
	if replies[0] != want {
		t.Errorf("reply not exact:\n%q\nwant\n%q", replies[0], want)
	}
	// A second prompt, a reply being written, then a third prompt.
	const ses = "ses_db9685d0affeV7ekVQOJhDJv4W"
	for _, q := range []string{
		`INSERT INTO message VALUES('msg_b1','` + ses + `',1796480800000,1796480800000,'{"role":"user","time":{"created":1796480800000}}')`,
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	// OpenCode stores a user message, then its parts.
	if replies, prompts, err = r.Read(false); len(replies)+len(prompts) != 0 || err != nil {
		t.Fatalf("a prompt without its text yet: %q, %q, %v", replies, prompts, err)
	}
	for _, q := range []string{
		`INSERT INTO part VALUES('prt_b1','msg_b1','` + ses + `',1796480800000,1796480800000,'{"type":"text","text":"second"}')`,
		`INSERT INTO part VALUES('prt_b2','msg_b1','` + ses + `',1796480800000,1796480800000,'{"type":"text","text":"relay note","synthetic":true}')`,
		`INSERT INTO message VALUES('msg_b2','` + ses + `',1796480800100,1796480800100,'{"role":"assistant","time":{"created":1796480800100}}')`,
		`INSERT INTO part VALUES('prt_b3','msg_b2','` + ses + `',1796480800100,1796480800100,'{"type":"text","text":"\\@relay:Bob half"}')`,
		`INSERT INTO message VALUES('msg_b3','` + ses + `',1796480800200,1796480800200,'{"role":"user","time":{"created":1796480800200}}')`,
		`INSERT INTO part VALUES('prt_b4','msg_b3','` + ses + `',1796480800200,1796480800200,'{"type":"text","text":"third"}')`,
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	replies, prompts, err = r.Read(false)
	if err != nil || len(replies) != 0 || len(prompts) != 1 || prompts[0] != "second" {
		t.Fatalf("while the reply is written: %q, %q, %v", replies, prompts, err)
	}
	if _, err := w.Exec(`UPDATE part SET data='{"type":"text","text":"\\@relay:Bob whole"}' WHERE id='prt_b3';
		UPDATE message SET data='{"role":"assistant","time":{"created":1796480800100,"completed":1796480800150}}' WHERE id='msg_b2'`); err != nil {
		t.Fatal(err)
	}
	replies, prompts, err = r.Read(true)
	if err != nil || len(replies) != 1 || replies[0] != `\@relay:Bob whole` || len(prompts) != 1 || prompts[0] != "third" {
		t.Fatalf("once completed: %q, %q, %v", replies, prompts, err)
	}
	if replies, prompts, err = r.Read(true); len(replies)+len(prompts) != 0 || err != nil {
		t.Errorf("again: %q, %q, %v", replies, prompts, err)
	}
}
