package delivery

import (
	"fmt"
	"sync"
	"time"
)

// DamperOptions bounds how fast agents may message each other; zero values
// mean defaults.
type DamperOptions struct {
	// PairMax messages from one agent to another within PairWindow
	// (default 10 in 1 minute).
	PairWindow time.Duration
	PairMax    int
	// AgentMax messages from one agent to anyone within AgentWindow
	// (default 30 in 1 minute).
	AgentWindow time.Duration
	AgentMax    int
	// MaxHops is the longest chain of messages each caused by the one
	// before (default 10).
	MaxHops int
}

func (o *DamperOptions) fill() {
	if o.PairWindow <= 0 {
		o.PairWindow = time.Minute
	}
	if o.PairMax <= 0 {
		o.PairMax = 10
	}
	if o.AgentWindow <= 0 {
		o.AgentWindow = time.Minute
	}
	if o.AgentMax <= 0 {
		o.AgentMax = 30
	}
	if o.MaxHops <= 0 {
		o.MaxHops = 10
	}
}

// A Damper stops two agents from bouncing messages forever: per pair and
// per sender sliding windows, and a hop limit. A held message is reported
// to its sender, never dropped silently.
type Damper struct {
	o     DamperOptions
	mu    sync.Mutex
	pairs map[[2]string][]time.Time
	from  map[string][]time.Time
}

// NewDamper returns a damper with the given limits.
func NewDamper(o DamperOptions) *Damper {
	o.fill()
	return &Damper{o: o, pairs: map[[2]string][]time.Time{}, from: map[string][]time.Time{}}
}

// Allow reports whether from may send a message with hops to to at now,
// and records it if so; otherwise it says why the message is held.
func (d *Damper) Allow(now time.Time, from, to string, hops int) (bool, string) {
	if hops > d.o.MaxHops {
		return false, fmt.Sprintf("held: %d messages in a row each answered the one before (limit %d); a human must restart the exchange", hops, d.o.MaxHops)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	pair := [2]string{from, to}
	pw := window(d.pairs[pair], now, d.o.PairWindow)
	aw := window(d.from[from], now, d.o.AgentWindow)
	if len(pw) >= d.o.PairMax {
		d.pairs[pair] = pw
		return false, fmt.Sprintf("held: %s sent %s %d messages within %v (limit %d)", from, to, len(pw), d.o.PairWindow, d.o.PairMax)
	}
	if len(aw) >= d.o.AgentMax {
		d.from[from] = aw
		return false, fmt.Sprintf("held: %s sent %d messages within %v (limit %d)", from, len(aw), d.o.AgentWindow, d.o.AgentMax)
	}
	d.pairs[pair] = append(pw, now)
	d.from[from] = append(aw, now)
	return true, ""
}

// window drops the times older than w before now.
func window(ts []time.Time, now time.Time, w time.Duration) []time.Time {
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= w {
		i++
	}
	return ts[i:]
}
