// Command custommemory wraps an agent CLI with a memory backend of its own
// (the seed's memory.backend = 'custom'): the agent's @memory:save,
// @memory:search, @memory:list, @memory:get and @memory:forget go to the
// notes type below instead of the hub's store. Anything that implements
// relay.MemoryAPI serves: a vector database, a company wiki, mem0.
//
//	go run -tags sqlite_fts5 ./examples/custommemory -- claude
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/relayhq/relay"
)

// notes keeps memories in this process and finds them by the words they
// share with the query. Its ids start with "n".
type notes struct {
	mu  sync.Mutex
	all []relay.Memory
}

var _ relay.MemoryAPI = (*notes)(nil)

func (n *notes) Save(_ context.Context, m relay.Memory) (relay.Memory, bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if strings.TrimSpace(m.Text) == "" {
		return relay.Memory{}, false, fmt.Errorf("%w: empty text", relay.ErrMemoryInvalid)
	}
	for i, o := range n.all {
		if strings.EqualFold(o.Text, m.Text) {
			n.all[i].Updated = time.Now()
			return n.all[i], false, nil
		}
	}
	m.ID = fmt.Sprintf("n%07d", len(n.all)+1)
	m.Created, m.Updated = time.Now(), time.Now()
	if m.Scope == "" {
		m.Scope = relay.MemoryScopeWorkspace
	}
	n.all = append(n.all, m)
	return m, true, nil
}

func (n *notes) Search(_ context.Context, q relay.MemoryQuery) ([]relay.MemoryResult, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	words := strings.Fields(strings.ToLower(q.Text))
	var out []relay.MemoryResult
	for _, m := range slices.Backward(n.all) {
		hits := 0
		for _, w := range words {
			if strings.Contains(strings.ToLower(m.Text), w) {
				hits++
			}
		}
		if hits > 0 || len(words) == 0 {
			out = append(out, relay.MemoryResult{Memory: m, Score: float64(hits)})
		}
	}
	slices.SortStableFunc(out, func(a, b relay.MemoryResult) int { return int(b.Score - a.Score) })
	return out[:min(len(out), max(q.Limit, 10))], nil
}

func (n *notes) List(_ context.Context, f relay.MemoryFilter) ([]relay.Memory, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := slices.Clone(n.all)
	slices.Reverse(out)
	return out[:min(len(out), max(f.Limit, 20))], nil
}

func (n *notes) Get(_ context.Context, id string) (relay.Memory, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, m := range n.all {
		if m.ID == id {
			return m, nil
		}
	}
	return relay.Memory{}, fmt.Errorf("%w: no note %s", relay.ErrMemoryNotFound, id)
}

func (n *notes) Forget(ctx context.Context, id string) (relay.Memory, error) {
	m, err := n.Get(ctx, id)
	if err != nil {
		return m, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.all = slices.DeleteFunc(n.all, func(o relay.Memory) bool { return o.ID == id })
	return m, nil
}

func (n *notes) Export(_ context.Context, w io.Writer) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	enc := json.NewEncoder(w)
	for _, m := range n.all {
		if err := enc.Encode(m); err != nil {
			return err
		}
	}
	return nil
}

func (n *notes) Import(ctx context.Context, r io.Reader) (added, skipped int, err error) {
	ms, err := relay.ReadMemories(r)
	if err != nil {
		return 0, 0, err
	}
	for _, m := range ms {
		if _, created, err := n.Save(ctx, m); err != nil {
			return added, skipped, err
		} else if created {
			added++
		} else {
			skipped++
		}
	}
	return added, skipped, nil
}

func main() {
	os.Exit(run())
}

func run() int {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: custommemory [--] COMMAND [ARGS...]")
		return 2
	}
	home, err := relay.DefaultHome()
	if err != nil {
		fmt.Fprintln(os.Stderr, "custommemory:", err)
		return 1
	}
	r, err := relay.New(relay.Options{Home: home, Hub: os.Getenv("RELAY_HUB"), Token: os.Getenv("RELAY_TOKEN"), Memory: &notes{}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "custommemory:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	code, err := r.Wrap(ctx, args[0], args[1:]...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "custommemory:", err)
		return 1
	}
	return code
}
