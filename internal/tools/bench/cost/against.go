package main

import (
	"fmt"
	"path/filepath"
	"time"
)

// passAgainst runs the pass-through of passPhase with three commands in
// each round: relay, the relay binary of -against (main's, to compare a
// change with) and script, runs rounds after a warm-up, the order turned
// by one each round so that none is always first after the machine's
// pauses. Each relay's figures are medians of its ratios to script in
// the same round, and of relay's CPU over against's: on a shared machine
// a ratio within a round moves far less than the times themselves.
func passAgainst(h *harness, o options, file string, check func(n int64) error) ([]row, error) {
	against, err := filepath.Abs(o.against)
	if err != nil {
		return nil, err
	}
	cmds := [][]string{
		{h.relay, "wrap", "--hub", h.hub.URL(), "--", "cat", file},
		{against, "wrap", "--hub", h.hub.URL(), "--", "cat", file},
		{"script", "-qc", "cat " + file, "/dev/null"},
	}
	var flow, wall, cpu [3][]time.Duration
	var flowR, wallR, cpuR [2][]float64
	var cpuAB []float64
	for i := -1; i < o.runs; i++ {
		var got [3]timing
		for k := range cmds {
			c := (k + max(i, 0)) % len(cmds)
			t, err := timed(h, cmds[c])
			if err == nil {
				err = check(t.shown)
			}
			if err != nil {
				return nil, err
			}
			got[c] = t
		}
		if i < 0 {
			continue // the warm-up
		}
		for c, t := range got {
			flow[c], wall[c], cpu[c] = append(flow[c], t.flow), append(wall[c], t.wall), append(cpu[c], t.cpu)
		}
		s := got[2]
		for c := range 2 {
			flowR[c] = append(flowR[c], s.flow.Seconds()/max(got[c].flow.Seconds(), 1e-3))
			wallR[c] = append(wallR[c], s.wall.Seconds()/got[c].wall.Seconds())
			cpuR[c] = append(cpuR[c], got[c].cpu.Seconds()/max(s.cpu.Seconds(), 1e-3))
		}
		cpuAB = append(cpuAB, got[0].cpu.Seconds()/max(got[1].cpu.Seconds(), 1e-3))
	}
	ms := func(v []time.Duration) time.Duration { return median(v).Round(time.Millisecond) }
	var rows []row
	for c, name := range []string{"relay", "against"} {
		rows = append(rows, row{
			what: fmt.Sprintf("%s: %d MB vs script -qc, wall / first byte to last", name, o.sizeMB),
			figure: fmt.Sprintf("%.2fx / %.2fx (%v / %v vs %v / %v; CPU %v vs %v, %.2fx)",
				median(wallR[c]), median(flowR[c]), ms(wall[c]), ms(flow[c]), ms(wall[2]), ms(flow[2]),
				ms(cpu[c]), ms(cpu[2]), median(cpuR[c])),
			bar: ">= 0.95x"})
	}
	return append(rows, row{what: "  relay's CPU over against's", figure: fmt.Sprintf("%.2fx", median(cpuAB)), bar: "-"}), nil
}
