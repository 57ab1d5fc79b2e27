package patterns

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
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
	// Own says Inject is the user's own text (a configured hook's, a Go
	// handler's): typed with its commands intact. Otherwise it is typed
	// as outside text, neutralised (what the memory holds was written by
	// peers).
	Own bool
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
// ran without error, and every handler error joined (each a *HandlerError
// naming its namespace and position), so that one failing handler neither
// hides the others nor stops the chain. A handler that panics is recovered
// and counts as failed, with a *PanicError.
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
		res, err := call(ctx, h, cmd)
		if err != nil {
			errs = append(errs, &HandlerError{NS: cmd.NS, Target: cmd.Target, Index: i + 1, Of: len(chain), Err: err})
			continue
		}
		results = append(results, res)
		if res.Stop {
			break
		}
	}
	return results, errors.Join(errs...)
}

// HandlerError is the failure of one handler in Dispatch.
type HandlerError struct {
	NS, Target string
	Index, Of  int // the handler's position in its chain (from 1), and the chain's length
	Err        error
}

// Error names the handler and what went wrong, for logs.
func (e *HandlerError) Error() string {
	return fmt.Sprintf("handler %d of %d for @%s:%s: %v", e.Index, e.Of, e.NS, e.Target, e.Err)
}

// Unwrap returns the handler's own error.
func (e *HandlerError) Unwrap() error { return e.Err }

// PanicError is a handler's panic, recovered by Dispatch.
type PanicError struct {
	Value any    // what the handler panicked with
	Stack []byte // the goroutine's stack at the panic, for the log
}

// Error says the handler panicked and with what.
func (e *PanicError) Error() string { return fmt.Sprintf("panicked: %v", e.Value) }

// call runs h, turning a panic into a *PanicError so that one bad handler
// cannot take the session down.
func call(ctx context.Context, h Handler, cmd Command) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = Result{}, &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	return h(ctx, cmd)
}
