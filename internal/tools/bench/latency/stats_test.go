package main

import (
	"testing"
	"time"
)

func TestSummarise(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var ds []time.Duration
		for _, n := range ns {
			ds = append(ds, time.Duration(n)*time.Millisecond)
		}
		return ds
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100..1, unsorted
	}
	for _, c := range []struct {
		name          string
		in            []time.Duration
		p50, p99, max time.Duration
	}{
		{"one", ms(7), 7 * time.Millisecond, 7 * time.Millisecond, 7 * time.Millisecond},
		{"two", ms(9, 1), 1 * time.Millisecond, 9 * time.Millisecond, 9 * time.Millisecond},
		{"hundred", ms(hundred...), 50 * time.Millisecond, 99 * time.Millisecond, 100 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := summarise(c.in)
			if d.p50 != c.p50 || d.p99 != c.p99 || d.max != c.max || d.n != len(c.in) {
				t.Errorf("got %+v, want p50 %v p99 %v max %v", d, c.p50, c.p99, c.max)
			}
		})
	}
	if d := summarise(nil); d.String() != "no samples" {
		t.Errorf("empty: %s", d)
	}
}

func TestParseStamps(t *testing.T) {
	got := parseStamps(" # [relay] Message … -- seq=3 t=17\r # [relay] Message … -- seq=4 t=18 ")
	if len(got) != 2 || got[0] != (stampT{3, 17}) || got[1] != (stampT{4, 18}) {
		t.Errorf("got %v", got)
	}
}
