package delivery

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// seqTypist records, for each injection, its number and whether it was
// typed ahead of the agent's sign for the one before.
type seqTypist struct {
	typist
	seen   []string
	during func(n uint64) // runs inside each Type
}

func (ty *seqTypist) Type(ctx context.Context, in *Injection) error {
	ty.seen = append(ty.seen, fmt.Sprintf("%s#%d:%v", in.Text, in.N, in.Pipelined))
	if ty.during != nil {
		ty.during(in.N)
	}
	return ty.typist.Type(ctx, in)
}

// typeNext has q type what it would type now; false when it waits.
func typeNext(q *Queue) bool {
	b, _ := q.next()
	if b == nil {
		return false
	}
	q.deliver(context.Background(), b)
	return true
}

// TestPipelineTypesAheadOfTheEcho: with Pipeline 3, a shell gets three
// injections (each within the cap) before it shows it took them; then the
// queue waits. The sign for an injection counts for it and those before,
// not for those typed after it.
func TestPipelineTypesAheadOfTheEcho(t *testing.T) {
	ty := &seqTypist{}
	q := NewQueue(Options{Mode: ModeQueue, Join: "\r", MaxInjection: 4, Pipeline: 3,
		Clock: newFakeClock(), Recheck: time.Hour, Typist: ty})
	for _, s := range []string{"m1", "m2", "m3", "m4", "m5", "m6"} {
		q.Add(Item{ID: s, Text: s})
	}
	q.SetState(idle)
	for i := 0; i < 3; i++ {
		if !typeNext(q) {
			t.Fatalf("injection %d waited; want three typed ahead of the echo", i+1)
		}
	}
	if typeNext(q) {
		t.Fatalf("a fourth injection went before any echo: %v", ty.got())
	}
	q.SettledThrough(1) // the echo of m1: m2 and m3 are still on their way
	if !typeNext(q) {
		t.Fatal("nothing typed after the echo of the first injection")
	}
	if typeNext(q) {
		t.Fatalf("typed with three injections unseen: %v", ty.got())
	}
	q.SettledThrough(4)
	for _, m := range []string{"m5", "m6"} {
		if !typeNext(q) {
			t.Fatalf("%s waited after the echo of the last injection", m)
		}
	}
	want := "[m1#1:false m2#2:true m3#3:true m4#4:true m5#5:false m6#6:true]"
	if got := fmt.Sprint(ty.seen); got != want {
		t.Errorf("typed %s, want %s", got, want)
	}
}

// TestPipelineLateSignIsNotTheCurrent: the sign for an earlier injection
// that comes while the next one is being typed does not count for that
// one: the queue still waits for its own echo.
func TestPipelineLateSignIsNotTheCurrent(t *testing.T) {
	ty := &seqTypist{}
	q := NewQueue(Options{Mode: ModeQueue, Join: "\r", MaxInjection: 4, Pipeline: 2,
		Clock: newFakeClock(), Recheck: time.Hour, Typist: ty})
	for _, s := range []string{"m1", "m2", "m3"} {
		q.Add(Item{ID: s, Text: s})
	}
	q.SetState(idle)
	typeNext(q)
	ty.during = func(n uint64) { q.SettledThrough(n - 1) } // m1's echo while m2 is typed
	typeNext(q)
	ty.during = nil
	if !typeNext(q) { // m2 unseen: one below the pipeline
		t.Fatal("m3 waited with one injection unseen")
	}
	q.Add(Item{ID: "m4", Text: "m4"})
	if b, _ := q.next(); b != nil {
		t.Fatalf("typed %v with m2 and m3 unseen", texts(b))
	}
}

// TestWaitModeNeverPipelines: one-per-turn mode types one message and
// waits for the agent, whatever Pipeline says.
func TestWaitModeNeverPipelines(t *testing.T) {
	ty := &seqTypist{}
	q := NewQueue(Options{Mode: ModeWait, Pipeline: 3, Clock: newFakeClock(), Recheck: time.Hour, Typist: ty})
	q.Add(Item{ID: "a", Text: "a"})
	q.Add(Item{ID: "b", Text: "b"})
	q.SetState(idle)
	typeNext(q)
	if typeNext(q) {
		t.Fatalf("wait mode typed %v before the agent took the first", ty.got())
	}
}

// TestJournalMarkSurvivesAKill: what Mark returned from is in the file at
// once (the sync to disk comes later, in the background): a wrapper
// killed right after it, without Close, finds it typed when it starts
// again.
func TestJournalMarkSurvivesAKill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.Mark("m1", "m2"); err != nil {
		t.Fatal(err)
	}
	// No Close: the process dies here.
	j2, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if !j2.Seen("m1") || !j2.Seen("m2") {
		t.Error("a mark was lost with the process")
	}
}

// TestFitsCutsInjection: Fits bounds what one injection holds besides
// MaxInjection (a shell's screen), every item typed once in order; an item
// that does not fit even alone still goes, alone.
func TestFitsCutsInjection(t *testing.T) {
	ty := &seqTypist{}
	fits := func(texts []string) bool {
		n := 0
		for _, s := range texts {
			n += len(s)
		}
		return n <= 4
	}
	q := NewQueue(Options{Mode: ModeQueue, Join: "\r", MaxInjection: 100, Pipeline: 10,
		Clock: newFakeClock(), Recheck: time.Hour, Typist: ty, Fits: fits})
	for _, s := range []string{"a", "b", "c", "d", "e", "longer", "f"} {
		q.Add(Item{ID: s, Text: s})
	}
	q.SetState(idle)
	for typeNext(q) {
	}
	want := []string{"a\rb\rc\rd#1:false", "e#2:true", "longer#3:true", "f#4:true"}
	if got := ty.seen; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("injections %q, want %q", got, want)
	}
}
