package mailbox

import (
	"context"
	"fmt"
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
// command queue before it): the baseline of the benchmarks.
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

// BenchmarkHandOff: one producer, one consumer, b.N items.
func BenchmarkHandOff(b *testing.B) {
	b.Run("mailbox", func(b *testing.B) {
		m := New[int]()
		done := make(chan struct{})
		go func() {
			for range b.N {
				m.Get(context.Background())
			}
			close(done)
		}()
		for i := range b.N {
			m.Put(i)
		}
		<-done
	})
	b.Run("hand-written", func(b *testing.B) {
		q := &handQueue{ready: make(chan struct{}, 1)}
		done := make(chan struct{})
		go func() {
			for range b.N {
				q.get()
			}
			close(done)
		}()
		for i := range b.N {
			q.put(i)
		}
		<-done
	})
}
