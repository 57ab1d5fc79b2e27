package mailbox

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestOrder(t *testing.T) {
	m := New[int]()
	for i := range 100 {
		m.Put(i)
	}
	if got := m.Len(); got != 100 {
		t.Fatalf("Len = %d, want 100", got)
	}
	for i := range 50 {
		if v, ok := m.Take(); !ok || v != i {
			t.Fatalf("Take = %d, %v; want %d", v, ok, i)
		}
	}
	m.Put(100)
	all := m.TakeAll()
	if len(all) != 51 || all[0] != 50 || all[50] != 100 {
		t.Fatalf("TakeAll = %v", all)
	}
	if _, ok := m.Take(); ok {
		t.Fatal("Take on an empty mailbox reported an item")
	}
	if all := m.TakeAll(); all != nil {
		t.Fatalf("TakeAll on an empty mailbox = %v", all)
	}
}

func TestClose(t *testing.T) {
	t.Run("put after close", func(t *testing.T) {
		m := New[string]()
		m.Close()
		m.Close() // twice is fine
		if m.Put("x") {
			t.Fatal("Put after Close returned true")
		}
		if m.Len() != 0 || !m.Closed() {
			t.Fatalf("Len %d Closed %v", m.Len(), m.Closed())
		}
	})
	t.Run("get hands out what was queued, then the end", func(t *testing.T) {
		m := New[string]()
		m.Put("a")
		m.Put("b")
		m.Close()
		ctx := context.Background()
		for _, want := range []string{"a", "b"} {
			if v, ok := m.Get(ctx); !ok || v != want {
				t.Fatalf("Get = %q, %v; want %q", v, ok, want)
			}
		}
		if _, ok := m.Get(ctx); ok {
			t.Fatal("Get after the last item of a closed mailbox reported one")
		}
	})
	t.Run("close wakes a waiting get", func(t *testing.T) {
		m := New[int]()
		done := make(chan bool)
		go func() { _, ok := m.Get(context.Background()); done <- ok }()
		m.Close()
		if ok := <-done; ok {
			t.Fatal("Get woken by Close reported an item")
		}
	})
}

func TestGetContext(t *testing.T) {
	m := New[int]()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() { _, ok := m.Get(ctx); done <- ok }()
	cancel()
	if ok := <-done; ok {
		t.Fatal("Get after its context ended reported an item")
	}
	m.Put(7)
	if v, ok := m.Get(context.Background()); !ok || v != 7 {
		t.Fatalf("Get = %d, %v after a cancelled Get; want 7", v, ok)
	}
}

// TestManyProducers: every item put by concurrent producers is taken once,
// each producer's in its order, by a reader that selects on Ready.
func TestManyProducers(t *testing.T) {
	const producers, each = 8, 5000
	m := New[[2]int]()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				m.Put([2]int{p, i})
			}
		})
	}
	go func() { wg.Wait(); m.Close() }()
	next := make([]int, producers)
	n := 0
	for {
		v, ok := m.Get(context.Background())
		if !ok {
			break
		}
		if v[1] != next[v[0]] {
			t.Fatalf("producer %d: got item %d, want %d", v[0], v[1], next[v[0]])
		}
		next[v[0]]++
		n++
	}
	if n != producers*each {
		t.Fatalf("took %d items, want %d", n, producers*each)
	}
}

// TestSteadyQueueStaysSmall: a queue that never empties (the reader one
// item behind) keeps its array small instead of growing it for ever.
func TestSteadyQueueStaysSmall(t *testing.T) {
	m := New[int]()
	m.Put(-1)
	for i := range 100000 {
		m.Put(i)
		if _, ok := m.Take(); !ok {
			t.Fatal("Take found nothing")
		}
	}
	if c := cap(m.items); c > 256 {
		t.Fatalf("array capacity %d after 100,000 items through a queue of one", c)
	}
}

func TestReadyAfterPut(t *testing.T) {
	m := New[int]()
	m.Put(1)
	select {
	case <-m.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("Ready did not fire after Put")
	}
}

func TestTakeN(t *testing.T) {
	m := New[int]()
	if got := m.TakeN(4); got != nil {
		t.Fatalf("TakeN on an empty mailbox = %v", got)
	}
	for i := range 10 {
		m.Put(i)
	}
	for _, want := range [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}} {
		if got := m.TakeN(4); !slices.Equal(got, want) {
			t.Fatalf("TakeN(4) = %v, want %v", got, want)
		}
	}
	if m.Len() != 0 || m.TakeN(4) != nil {
		t.Fatalf("Len %d after every item was taken", m.Len())
	}
	// A reader one round behind keeps the array small.
	for i := range 100000 {
		m.Put(i)
		if i%8 == 7 {
			if got := m.TakeN(4); len(got) != 4 {
				t.Fatalf("TakeN(4) took %d", len(got))
			}
		}
	}
	if m.Len() != 50000 {
		t.Fatalf("Len = %d, want 50000", m.Len())
	}
	if v, _ := m.Take(); v != 50000 {
		t.Fatalf("oldest left = %d, want 50000", v)
	}
}

func TestSignal(t *testing.T) {
	s := NewSignal()
	s.Notify()
	s.Notify() // merged into the waiting token; never blocks
	select {
	case <-s:
	default:
		t.Fatal("no token after Notify")
	}
	select {
	case <-s:
		t.Fatal("two tokens after two Notifies with no read between")
	default:
	}
	var none Signal
	none.Notify() // a nil Signal ignores Notify, as a nil channel would
}

func Example() {
	m := New[string]()
	go func() {
		for _, s := range []string{"build", "test", "deploy"} {
			m.Put(s)
		}
		m.Close()
	}()
	for {
		s, ok := m.Get(context.Background())
		if !ok {
			break
		}
		fmt.Println(s)
	}
	// Output:
	// build
	// test
	// deploy
}

// handQueue is the hand-written queue that Mailbox replaces (the session's
// command queue before it): the baseline of BenchmarkMailbox.
type handQueue struct {
	mu    sync.Mutex
	items []int
	ready chan struct{}
}

func (q *handQueue) put(v int) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *handQueue) get() int {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			v := q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			return v
		}
		q.mu.Unlock()
		<-q.ready
	}
}

// BenchmarkMailbox: b.N items from one producer, then from four, to one
// reader, through a Mailbox and through the hand-written queue it
// replaces.
func BenchmarkMailbox(b *testing.B) {
	for _, producers := range []int{1, 4} {
		b.Run(fmt.Sprintf("producers=%d/mailbox", producers), func(b *testing.B) {
			b.ReportAllocs()
			m := New[int]()
			produce(b.N, producers, func(v int) { m.Put(v) })
			for range b.N {
				m.Get(context.Background())
			}
		})
		b.Run(fmt.Sprintf("producers=%d/hand-written", producers), func(b *testing.B) {
			b.ReportAllocs()
			q := &handQueue{ready: make(chan struct{}, 1)}
			produce(b.N, producers, q.put)
			for range b.N {
				q.get()
			}
		})
	}
}

// produce starts producers goroutines that put n items between them.
func produce(n, producers int, put func(int)) {
	for p := range producers {
		go func() {
			for i := p; i < n; i += producers {
				put(i)
			}
		}()
	}
}

// handRounds is the hand-written queue of bus's receipter before it was a
// Mailbox: what was posted is taken in rounds of at most max.
type handRounds struct {
	mu    sync.Mutex
	q     []int
	ready chan struct{}
}

func (r *handRounds) post(v int) {
	r.mu.Lock()
	r.q = append(r.q, v)
	r.mu.Unlock()
	select {
	case r.ready <- struct{}{}:
	default:
	}
}

func (r *handRounds) round(max int) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := min(len(r.q), max)
	round := r.q[:n:n]
	r.q = r.q[n:]
	return round
}

// BenchmarkRounds: b.N items from one producer, then from four, taken in
// rounds of at most 512 (the receipts' batch), through a Mailbox's TakeN
// and through the receipter's hand-written queue.
func BenchmarkRounds(b *testing.B) {
	const max = 512
	for _, producers := range []int{1, 4} {
		b.Run(fmt.Sprintf("producers=%d/mailbox", producers), func(b *testing.B) {
			b.ReportAllocs()
			m := New[int]()
			produce(b.N, producers, func(v int) { m.Put(v) })
			for n := 0; n < b.N; {
				<-m.Ready()
				for r := m.TakeN(max); len(r) > 0; r = m.TakeN(max) {
					n += len(r)
				}
			}
		})
		b.Run(fmt.Sprintf("producers=%d/hand-written", producers), func(b *testing.B) {
			b.ReportAllocs()
			q := &handRounds{ready: make(chan struct{}, 1)}
			produce(b.N, producers, q.post)
			for n := 0; n < b.N; {
				<-q.ready
				for r := q.round(max); len(r) > 0; r = q.round(max) {
					n += len(r)
				}
			}
		})
	}
}

// BenchmarkSignal: Notify against the select written by hand in each
// stage (the output tap's and the scanner's wake-ups are on the hot path).
func BenchmarkSignal(b *testing.B) {
	b.Run("signal", func(b *testing.B) {
		s := NewSignal()
		for b.Loop() {
			s.Notify()
			s.Notify()
			<-s
		}
	})
	b.Run("hand-written", func(b *testing.B) {
		c := make(chan struct{}, 1)
		for b.Loop() {
			select {
			case c <- struct{}{}:
			default:
			}
			select {
			case c <- struct{}{}:
			default:
			}
			<-c
		}
	})
}
