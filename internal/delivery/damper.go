package delivery

import (
	"fmt"
	"sync"
	"time"
)

// Damper defaults, as DefaultDamperOptions returns them.
const (
	DefaultPairWindow  = time.Minute
	DefaultPairMax     = 10
	DefaultAgentWindow = time.Minute
	DefaultAgentMax    = 30
	// DefaultMaxHops is the longest chain of messages each answering the
	// one before that is sent; the next is held.
	DefaultMaxHops = 8
)

// DamperOptions bounds how fast agents may message each other; zero values
// mean defaults.
type DamperOptions struct {
	// PairMax attempts from one agent to another within PairWindow
	// (default 10 in 1 minute).
	PairWindow time.Duration
	PairMax    int
	// AgentMax attempts from one agent to anyone within AgentWindow
	// (default 30 in 1 minute).
	AgentWindow time.Duration
	AgentMax    int
	// MaxHops is the longest chain of messages each caused by the one
	// before (default 8).
	MaxHops int
}

// DefaultDamperOptions returns the damper's defaults: a fresh value on
// every call.
func DefaultDamperOptions() DamperOptions {
	return DamperOptions{
		PairWindow: DefaultPairWindow, PairMax: DefaultPairMax,
		AgentWindow: DefaultAgentWindow, AgentMax: DefaultAgentMax,
		MaxHops: DefaultMaxHops,
	}
}

func (o *DamperOptions) fill() {
	d := DefaultDamperOptions()
	if o.PairWindow <= 0 {
		o.PairWindow = d.PairWindow
	}
	if o.PairMax <= 0 {
		o.PairMax = d.PairMax
	}
	if o.AgentWindow <= 0 {
		o.AgentWindow = d.AgentWindow
	}
	if o.AgentMax <= 0 {
		o.AgentMax = d.AgentMax
	}
	if o.MaxHops <= 0 {
		o.MaxHops = d.MaxHops
	}
}

// Verdict is the damper's answer to one attempt to send.
type Verdict struct {
	// OK says the message may be sent.
	OK bool
	// Why says why it is held (empty when OK).
	Why string
	// Quiet marks a held attempt that repeats one already reported for the
	// same pair within PairWindow: the caller sends no notice and keeps no
	// held record, so that a notice is never itself the cause of another
	// (an agent that answers every line would answer the notice).
	Quiet bool
}

// A Damper stops two agents from bouncing messages forever: per pair and
// per sender sliding windows, and a hop limit. Every attempt counts towards
// the windows, held ones included, so that an agent that keeps trying stays
// held until it stops for a window. The first held attempt of a pair in a
// window is reported to its sender; repeats are Quiet.
type Damper struct {
	o       DamperOptions
	mu      sync.Mutex
	pairs   map[[2]string][]time.Time
	from    map[string][]time.Time
	noticed map[[2]string]time.Time // when a pair's last held attempt was reported
}

// NewDamper returns a damper with the given limits.
func NewDamper(o DamperOptions) *Damper {
	o.fill()
	return &Damper{o: o, pairs: map[[2]string][]time.Time{}, from: map[string][]time.Time{}, noticed: map[[2]string]time.Time{}}
}

// Check judges an attempt by from to send to to a message with hops at
// now, and records it (held or not).
func (d *Damper) Check(now time.Time, from, to string, hops int) Verdict {
	d.mu.Lock()
	defer d.mu.Unlock()
	pair := [2]string{from, to}
	pw := window(d.pairs[pair], now, d.o.PairWindow)
	aw := window(d.from[from], now, d.o.AgentWindow)
	var why string
	switch {
	case hops > d.o.MaxHops:
		why = fmt.Sprintf("held: %d messages in a row each answered the one before (limit %d); a human must restart the exchange", hops, d.o.MaxHops)
	case len(pw) >= d.o.PairMax:
		why = fmt.Sprintf("held: %s sent %s %d messages within %v (limit %d)", from, to, len(pw), d.o.PairWindow, d.o.PairMax)
	case len(aw) >= d.o.AgentMax:
		why = fmt.Sprintf("held: %s sent %d messages within %v (limit %d)", from, len(aw), d.o.AgentWindow, d.o.AgentMax)
	}
	d.pairs[pair] = record(pw, now, d.o.PairMax)
	d.from[from] = record(aw, now, d.o.AgentMax)
	if why == "" {
		return Verdict{OK: true}
	}
	if last, ok := d.noticed[pair]; ok && now.Sub(last) < d.o.PairWindow {
		return Verdict{Why: why, Quiet: true}
	}
	d.noticed[pair] = now
	return Verdict{Why: why}
}

// Allow is Check for callers that only need to know whether to send:
// ok, or why the message is held.
func (d *Damper) Allow(now time.Time, from, to string, hops int) (bool, string) {
	v := d.Check(now, from, to, hops)
	return v.OK, v.Why
}

// window drops the times older than w before now.
func window(ts []time.Time, now time.Time, w time.Duration) []time.Time {
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= w {
		i++
	}
	return ts[i:]
}

// record appends now to ts, keeping the last max times: enough to know
// whether max attempts fell within the window.
func record(ts []time.Time, now time.Time, max int) []time.Time {
	ts = append(ts, now)
	if len(ts) > max {
		ts = append(ts[:0:0], ts[len(ts)-max:]...)
	}
	return ts
}
