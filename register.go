package relay

import (
	"errors"
	"fmt"
	"strings"

	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/patterns"
)

// Registration errors. Pattern, Override and On wrap them, so that a
// handler that could never run is refused when it is registered rather
// than silently ignored (or, for a nil handler, crashing the wrapper later).
var (
	// ErrNilHandler is wrapped by Pattern, Override and On given a nil
	// handler.
	ErrNilHandler = errors.New("nil handler")
	// ErrUnknownEvent is wrapped by On given an event name that is not one
	// of Events() (names are case-sensitive: "SessionStart", not
	// "sessionStart" or "onSessionStart").
	ErrUnknownEvent = errors.New("unknown event")
	// ErrNotBuiltin is wrapped by Override given a namespace other than
	// relay, broadcast and memory: a user namespace has no built-in handler
	// to replace.
	ErrNotBuiltin = errors.New("not a built-in namespace")
)

// Events returns every event On accepts: the lifecycle events of the
// configuration files (config.Events, in their documentation order, the
// one list of them), so that a hook the files accept is always one On
// accepts; this package's constants name the same events.
func Events() []Event {
	evs := config.Events()
	out := make([]Event, len(evs))
	for i, e := range evs {
		out[i] = Event(e)
	}
	return out
}

// checkEvent returns nil for a known event, else an error wrapping
// ErrUnknownEvent that names the event meant when the difference is only
// case or the seed's "on" prefix.
func checkEvent(ev Event) error {
	for _, e := range Events() {
		if ev == e {
			return nil
		}
	}
	want := strings.TrimPrefix(strings.TrimPrefix(string(ev), "on"), "On")
	for _, e := range Events() {
		if strings.EqualFold(want, string(e)) {
			return fmt.Errorf("relay: On(%q): %w (did you mean %s?)", string(ev), ErrUnknownEvent, e)
		}
	}
	names := make([]string, 0, len(Events()))
	for _, e := range Events() {
		names = append(names, string(e))
	}
	return fmt.Errorf("relay: On(%q): %w (want one of %s)", string(ev), ErrUnknownEvent, strings.Join(names, ", "))
}

// isBuiltin reports whether ns (lower case) is handled by relay itself.
func isBuiltin(ns string) bool {
	return ns == patterns.NSRelay || ns == patterns.NSBroadcast || ns == patterns.NSMemory
}

// Override registers h in place of relay's own handler of a built-in
// namespace (relay, broadcast or memory): with it, @memory: commands go to
// h and no longer to relay's memory store, so that a memory backend of
// one's own can be plugged in. Handlers registered with Pattern for the
// namespace still run after it, in order, until one returns Stop.
func (r *Relay) Override(ns string, h HandlerFunc) error {
	ns = strings.ToLower(ns)
	if !isBuiltin(ns) {
		return fmt.Errorf("relay: override %q: %w (want relay, broadcast or memory)", ns, ErrNotBuiltin)
	}
	if h == nil {
		return fmt.Errorf("relay: override %q: %w", ns, ErrNilHandler)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.patterns = append(r.patterns, userPattern{ns: ns, h: h, override: true})
	return nil
}
