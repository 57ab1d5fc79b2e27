package patterns

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Handler acts on one command: it sends a message, queries memory, runs a
// user's program. It returns what to type back into the agent, if anything.
type Handler func(ctx context.Context, cmd Command) (Result, error)

// Result is what one handler made of a command.
type Result struct {
	// Inject is text to type back into the agent (for example memory search
	// results); empty for none.
	Inject string
	// Stop ends the chain: handlers registered later for the namespace do
	// not run.
	Stop bool
}

// Registry holds handlers per namespace in registration order: the caller
// registers the built-ins first, then the user's, so a user handler runs
// after the built-in one unless that one stops the chain. It is safe for
// concurrent use.
type Registry struct {
	mu       sync.RWMutex
	handlers map[string][]Handler
	order    []string // namespaces in first-registration order
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{handlers: map[string][]Handler{}} }

// Handle appends h to the chain of namespace ns (case-insensitive) and
// registers the namespace.
func (r *Registry) Handle(ns string, h Handler) error {
	if !validNamespace(ns) {
		return fmt.Errorf("register handler: namespace %q: want a letter followed by letters, digits, '-' or '_' (at most 64)", ns)
	}
	if h == nil {
		return fmt.Errorf("register handler for @%s: nil handler", ns)
	}
	ns = strings.ToLower(ns)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.handlers[ns]; !ok {
		r.order = append(r.order, ns)
	}
	r.handlers[ns] = append(r.handlers[ns], h)
	return nil
}

// Namespaces returns the built-ins plus every namespace with a handler, as a
// new set the caller owns.
func (r *Registry) Namespaces() *Namespaces {
	n, _ := NewNamespaces()
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, ns := range r.order {
		_ = n.Add(ns)
	}
	return n
}

// ErrNoHandler is returned by Dispatch when no handler is registered for the
// command's namespace: the command was recognised but nothing acted on it.
var ErrNoHandler = errors.New("no handler")

// Dispatch runs the handlers of cmd's namespace in registration order until
// one returns Stop or ctx ends. It returns the results of the handlers that
// ran without error, and every handler error joined (each names its
// namespace and position), so that one failing handler neither hides the
// others nor stops the chain.
func (r *Registry) Dispatch(ctx context.Context, cmd Command) ([]Result, error) {
	r.mu.RLock()
	chain := r.handlers[strings.ToLower(cmd.NS)]
	r.mu.RUnlock()
	if len(chain) == 0 {
		return nil, fmt.Errorf("dispatch @%s:%s: %w", cmd.NS, cmd.Target, ErrNoHandler)
	}
	var results []Result
	var errs []error
	for i, h := range chain {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("dispatch @%s:%s: %w", cmd.NS, cmd.Target, err))
			break
		}
		res, err := h(ctx, cmd)
		if err != nil {
			errs = append(errs, fmt.Errorf("handler %d for @%s:%s: %w", i+1, cmd.NS, cmd.Target, err))
			continue
		}
		results = append(results, res)
		if res.Stop {
			break
		}
	}
	return results, errors.Join(errs...)
}
