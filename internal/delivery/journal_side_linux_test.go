package delivery

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// sideOf returns the side file of the journal at path, removed when the
// test ends; it skips the test where the machine has no tmpfs for it.
func sideOf(t *testing.T, path string) string {
	t.Helper()
	if fi, err := os.Stat(sideRoot); err != nil || !fi.IsDir() {
		t.Skipf("no %s", sideRoot)
	}
	_, side, err := sidePath(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(side) })
	return side
}

// TestJournalMarkNeverWaitsForTheDisk: Mark is made right after the text
// reached the agent, so it is on the side file (memory) when it returns,
// whatever the journal's own file (on a disk that may be busy) got yet: a
// wrapper killed then, before the background write, is followed by one
// that knows the message was typed (the soak test typed a message twice
// when a SIGKILL met a journal write held up by a busy disk).
func TestJournalMarkNeverWaitsForTheDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "delivered")
	side := sideOf(t, path)
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	// The background writer is held, as a busy disk would hold it; the
	// process is then "killed" (its files closed without Close).
	close(j.stop)
	<-j.done
	if err := j.Mark("Alice/m1", "Alice/m2"); err != nil {
		t.Fatal(err)
	}
	onDisk, err := readIDs(path)
	if err != nil {
		t.Fatal(err)
	}
	onSide, err := readIDs(side)
	if err != nil {
		t.Fatal(err)
	}
	if len(onDisk) != 0 || !slices.Equal(onSide, []string{"Alice/m1", "Alice/m2"}) {
		t.Fatalf("after Mark: journal file %q, side file %q; want the marks on the side file only", onDisk, onSide)
	}
	j.side.Close()
	j.f.Close()

	next, err := OpenJournal(path) // the wrapper started again
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	for _, id := range []string{"Alice/m1", "Alice/m2"} {
		if !next.Seen(id) {
			t.Errorf("the next journal has not seen %s", id)
		}
	}
	onDisk, err = readIDs(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(onDisk, []string{"Alice/m1", "Alice/m2"}) {
		t.Errorf("journal file after reopening: %q; want the side file's marks in it", onDisk)
	}
}

// TestJournalSideFileEmptiedAndRemoved: marks reach the journal's file in
// the background, and Close removes the side file.
func TestJournalSideFileEmptiedAndRemoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "delivered")
	side := sideOf(t, path)
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Mark("Bob/x"); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(side); !os.IsNotExist(err) {
		t.Errorf("side file after Close: %v; want it removed", err)
	}
	ids, err := readIDs(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"Bob/x"}) {
		t.Errorf("journal file %q, want [Bob/x]", ids)
	}
}
