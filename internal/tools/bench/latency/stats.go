package main

import (
	"fmt"
	"slices"
	"time"
)

// dist summarises durations: count, p50, p99 and max (nearest rank).
type dist struct {
	n             int
	p50, p99, max time.Duration
}

func summarise(ds []time.Duration) dist {
	if len(ds) == 0 {
		return dist{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return dist{n: len(s), p50: rank(0.50), p99: rank(0.99), max: s[len(s)-1]}
}

func (d dist) String() string {
	if d.n == 0 {
		return "no samples"
	}
	return fmt.Sprintf("p50 %s  p99 %s  max %s  (n=%d)", ms(d.p50), ms(d.p99), ms(d.max), d.n)
}

// ms prints a duration in milliseconds with a precision that suits it.
func ms(d time.Duration) string {
	f := float64(d) / float64(time.Millisecond)
	switch {
	case f < 1:
		return fmt.Sprintf("%.3f ms", f)
	case f < 100:
		return fmt.Sprintf("%.1f ms", f)
	}
	return fmt.Sprintf("%.0f ms", f)
}
