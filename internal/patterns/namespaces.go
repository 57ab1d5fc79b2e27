package patterns

import (
	"fmt"
	"sort"
	"strings"
)

// Built-in namespaces, registered in every Namespaces set.
const (
	NSRelay     = "relay"     // @relay:NAME body sends to one agent (NAME "*" for all)
	NSBroadcast = "broadcast" // @broadcast: body sends to every agent; it has no target
	NSMemory    = "memory"    // @memory:save|search|list|forget body talks to the memory store
)

// Namespaces is the set of registered namespaces: only commands whose
// namespace is in the set fire, so that e-mail addresses, host:port pairs
// and prose never do. Names are case-insensitive. A Namespaces value is not
// safe for concurrent Add and Has; build it first, then share it read-only.
type Namespaces struct {
	names map[string]struct{}
}

// NewNamespaces returns the built-in namespaces plus extra ones. It fails on
// the first extra name that is not a valid namespace.
func NewNamespaces(extra ...string) (*Namespaces, error) {
	n := &Namespaces{names: map[string]struct{}{NSRelay: {}, NSBroadcast: {}, NSMemory: {}}}
	for _, name := range extra {
		if err := n.Add(name); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Add registers a namespace: a letter followed by letters, digits, '-' or
// '_', at most 64 bytes.
func (n *Namespaces) Add(name string) error {
	if !validNamespace(name) {
		return fmt.Errorf("namespace %q: want a letter followed by letters, digits, '-' or '_' (at most 64)", name)
	}
	if n.names == nil {
		n.names = map[string]struct{}{}
	}
	n.names[strings.ToLower(name)] = struct{}{}
	return nil
}

// Has reports whether name (any case) is registered. A nil set holds the
// built-ins only.
func (n *Namespaces) Has(name string) bool {
	if n == nil {
		l := strings.ToLower(name)
		return l == NSRelay || l == NSBroadcast || l == NSMemory
	}
	if _, ok := n.names[name]; ok {
		return true
	}
	_, ok := n.names[strings.ToLower(name)]
	return ok
}

// Names returns the registered namespaces in lower case, sorted.
func (n *Namespaces) Names() []string {
	if n == nil {
		return []string{NSBroadcast, NSMemory, NSRelay}
	}
	out := make([]string, 0, len(n.names))
	for k := range n.names {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Clone returns an independent copy of the set.
func (n *Namespaces) Clone() *Namespaces {
	c, _ := NewNamespaces()
	if n != nil {
		for k := range n.names {
			c.names[k] = struct{}{}
		}
	}
	return c
}

func validNamespace(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '_'):
		default:
			return false
		}
	}
	return true
}
