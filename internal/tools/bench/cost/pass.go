package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// passReader is a human terminal that the pass-through's commands show
// their output on.
type passReader struct {
	name  string
	timed func(argv []string) (timing, error)
	bytes bool // it counts the bytes and times the first and the last
	// optional: a failure ends only this reader's rows (tmux's, which
	// hangs on more than the bench), not the phase.
	optional bool
}

// passPhase shows a file of o.sizeMB through relay wrap, through the relay
// binary of -against if given (main's, to compare a change with) and
// through script -qc, each in a terminal, and compares their throughput:
// script's time over relay's, above 1 relay is faster.
//
// Each command is read by three terminals in turn (readers):
//   - a process of its own with a plain blocking read loop (readerChild):
//     a person's terminal emulator, and the figure the bar is for;
//   - a goroutine of the bench (term), which also hosts the hub the
//     wrapper talks to during the flood: the figure the bench reported
//     before, kept for continuity;
//   - tmux, where installed: a real terminal emulator, which draws every
//     byte into a screen and so slows every command alike; only wall and
//     CPU times, measured by the shell in its window.
//
// A round runs every command with every reader after a warm-up round,
// the commands' order turned by one each round so that none is always
// first after the machine's pauses. Each figure is the median over the
// rounds of a ratio to script's run with the same reader in the same
// round: on a shared machine a ratio within a round moves far less than
// the times themselves. CPU is each command's with its children (`cat`),
// and moves less with the load than the wall times.
func passPhase(_ context.Context, h *harness, o options) ([]row, error) {
	file := filepath.Join(h.dir, "text")
	size := o.sizeMB << 20
	if err := writeText(file, size); err != nil {
		return nil, err
	}
	defer os.Remove(file)
	var readers []passReader
	if o.readers["own"] {
		readers = append(readers, passReader{"own process", func(a []string) (timing, error) { return timedApart(h, a) }, true, false})
	}
	if o.readers["goroutine"] {
		readers = append(readers, passReader{"bench goroutine", func(a []string) (timing, error) { return timed(h, a) }, true, false})
	}
	if o.readers["tmux"] {
		if tm, err := startTmux(h); err != nil {
			fmt.Fprintln(os.Stderr, "cost: no row through tmux:", err)
		} else {
			defer tm.close()
			readers = append(readers, passReader{"tmux", tm.timed, false, true})
		}
	}
	if len(readers) == 0 {
		return nil, fmt.Errorf("no reader among -readers")
	}
	names := []string{"relay"}
	cmds := [][]string{{h.relay, "wrap", "--hub", h.hub.URL(), "--", "cat", file}}
	if o.against != "" {
		against, err := filepath.Abs(o.against)
		if err != nil {
			return nil, err
		}
		names = append(names, "against")
		cmds = append(cmds, []string{against, "wrap", "--hub", h.hub.URL(), "--", "cat", file})
	}
	cmds = append(cmds, []string{"script", "-qc", "cat " + file, "/dev/null"})
	sc := len(cmds) - 1 // script's index

	// got[reader][command] holds each round's timing.
	got := make([][][]timing, len(readers))
	for r := range got {
		got[r] = make([][]timing, len(cmds))
	}
	failed := make([]error, len(readers)) // an optional reader's failure
	loads := []float64{}
	for i := -1; i < o.runs; i++ {
		if l, err := strconv.ParseFloat(loadAvg(), 64); err == nil {
			loads = append(loads, l)
		}
		for r, rd := range readers {
			if failed[r] != nil {
				continue
			}
			round := make([]timing, len(cmds))
			for k := range cmds {
				c := (k + max(i, 0)) % len(cmds)
				t, err := rd.timed(cmds[c])
				if err == nil && rd.bytes && t.shown < int64(size) {
					err = fmt.Errorf("%s reader, %v: only %d of %d bytes shown", rd.name, cmds[c], t.shown, size)
				}
				if err != nil && !rd.optional {
					return nil, err
				}
				if err != nil {
					fmt.Fprintf(os.Stderr, "cost: no more rounds with the %s reader: %v\n", rd.name, err)
					failed[r] = err
					break
				}
				round[c] = t
			}
			if failed[r] == nil && i >= 0 { // not the warm-up
				for c, t := range round {
					got[r][c] = append(got[r][c], t)
				}
			}
		}
	}
	ms := func(v []time.Duration) time.Duration { return median(v).Round(time.Millisecond) }
	var rows []row
	for r, rd := range readers {
		if failed[r] != nil {
			rows = append(rows, row{what: rd.name + " reader", bar: "-",
				figure: fmt.Sprintf("failed after %d rounds: %v", len(got[r][sc]), failed[r])})
		}
		if len(got[r][sc]) == 0 {
			continue
		}
		var wall, flow, cpu [][]time.Duration
		for c := range cmds {
			var w, f, u []time.Duration
			for _, t := range got[r][c] {
				w, f, u = append(w, t.wall), append(f, t.flow), append(u, t.cpu)
			}
			wall, flow, cpu = append(wall, w), append(flow, f), append(cpu, u)
		}
		for c, name := range names {
			var wallR, flowR, cpuR []float64
			for i, s := range got[r][sc] {
				t := got[r][c][i]
				wallR = append(wallR, s.wall.Seconds()/t.wall.Seconds())
				flowR = append(flowR, s.flow.Seconds()/max(t.flow.Seconds(), 1e-3))
				cpuR = append(cpuR, t.cpu.Seconds()/max(s.cpu.Seconds(), 1e-3))
			}
			what := fmt.Sprintf("%s: %d MB vs script -qc, %s reader, wall", name, o.sizeMB, rd.name)
			figure := fmt.Sprintf("%.2fx (%v vs %v; CPU %v vs %v, %.2fx)", median(wallR), ms(wall[c]), ms(wall[sc]),
				ms(cpu[c]), ms(cpu[sc]), median(cpuR))
			if rd.bytes {
				what += " / first byte to last"
				figure = fmt.Sprintf("%.2fx / %.2fx (%v / %v vs %v / %v; CPU %v vs %v, %.2fx)",
					median(wallR), median(flowR), ms(wall[c]), ms(flow[c]), ms(wall[sc]), ms(flow[sc]),
					ms(cpu[c]), ms(cpu[sc]), median(cpuR))
			}
			rows = append(rows, row{what: what, figure: figure, bar: ">= 0.95x"})
		}
		if len(names) == 2 {
			var cpuAB []float64
			for i, t := range got[r][0] {
				cpuAB = append(cpuAB, t.cpu.Seconds()/max(got[r][1][i].cpu.Seconds(), 1e-3))
			}
			rows = append(rows, row{what: "  relay's CPU over against's, " + rd.name + " reader", figure: fmt.Sprintf("%.2fx", median(cpuAB)), bar: "-"})
		}
	}
	return append(rows, row{what: "  load average at each round's start", figure: loadRange(loads), bar: "-"}), nil
}

// loadRange formats the least and the most of loads.
func loadRange(loads []float64) string {
	if len(loads) == 0 {
		return "?"
	}
	lo, hi := loads[0], loads[0]
	for _, l := range loads {
		lo, hi = min(lo, l), max(hi, l)
	}
	return fmt.Sprintf("%.2f-%.2f", lo, hi)
}

// writeText writes size bytes of log-like lines to path.
func writeText(path string, size int) error {
	words := strings.Fields("the agent relay wrote a line of text with @relay:Bob some words and numbers 12345 into its terminal while tests ran")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var line []byte
	for written, k := 0, 0; written < size; k++ {
		// Each line starts with a word: the mention never fires.
		line = append(line[:0], "log: "...)
		for i := 0; i < 5+k%15; i++ {
			line = append(line, words[(k*7+i*3)%len(words)]...)
			line = append(line, ' ')
		}
		line = append(line, '\n')
		line = line[:min(len(line), size-written)]
		if _, err := f.Write(line); err != nil {
			return err
		}
		written += len(line)
	}
	return f.Close()
}
