// Command passthrough measures relay wrap's pass-through against script(1)
// in the same run: both run `cat FILE` in a pseudo-terminal and write to a
// pipe that this program reads. It checks that every byte arrives, and
// prints throughput, the ratio, the CPU time each used (with cat's: on a
// shared machine a steadier figure than the wall clock), and the wrapper's
// peak resident memory; then the ratios beside the bar of issue 22.
//
//	go run ./internal/tools/bench/passthrough -relay bin/relay [-sizes 10,50] [-runs 3]
package main

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	relay := flag.String("relay", "bin/relay", "the relay binary")
	sizes := flag.String("sizes", "10,50", "file sizes in MB")
	runs := flag.Int("runs", 5, "runs of each command; the median counts")
	flag.Parse()
	if err := run(*relay, *sizes, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "passthrough:", err)
		os.Exit(1)
	}
}

// result is one timed run.
type result struct {
	dur    time.Duration
	cpu    time.Duration // user and system time of the command and its waited-for children
	bytes  int64
	maxRSS int64 // KiB
	ok     bool
}

func run(relay, sizes string, runs int) error {
	if _, err := exec.LookPath("script"); err != nil {
		return fmt.Errorf("script(1) is the baseline and is not installed: %w", err)
	}
	dir, err := os.MkdirTemp("", "relay-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "home")
	// relay wrap joins a team: start its hub first, as a user's first
	// wrapper would have, so that the runs measure the pass-through.
	up := exec.Command(relay, "up", "--detach")
	up.Env = append(os.Environ(), "RELAY_HOME="+home)
	if out, err := up.CombinedOutput(); err != nil {
		return fmt.Errorf("relay up --detach: %v: %s", err, out)
	}
	defer func() {
		down := exec.Command(relay, "down")
		down.Env = append(os.Environ(), "RELAY_HOME="+home)
		_ = down.Run()
	}()
	fmt.Printf("%-8s %-7s %12s %12s %8s %10s %10s %s\n", "size", "cmd", "median", "MB/s", "ratio", "CPU", "peak RSS", "bytes")
	var summary []string
	for _, s := range strings.Split(sizes, ",") {
		mb, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("bad size %q: %w", s, err)
		}
		file := filepath.Join(dir, fmt.Sprintf("text-%dMB", mb))
		want, err := writeText(file, mb<<20)
		if err != nil {
			return err
		}
		// relay wraps cat as a team member (it joins the hub first), and
		// alone (--hub none: the wrapper and its screen reading only).
		cmds := map[string][]string{
			"script": {"script", "-qc", "cat " + file, "/dev/null"},
			"relay":  {relay, "wrap", "--", "cat", file},
			"alone":  {relay, "wrap", "--hub", "none", "--", "cat", file},
		}
		names := []string{"script", "relay", "alone"}
		res := map[string][]result{}
		for i := 0; i < runs; i++ {
			for _, name := range names {
				r, err := measure(cmds[name], home, want)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				res[name] = append(res[name], r)
			}
		}
		base := median(res["script"])
		for _, name := range names {
			m := median(res[name])
			ok := "all bytes"
			for _, r := range res[name] {
				if !r.ok {
					ok = fmt.Sprintf("LOST BYTES (%d arrived)", r.bytes)
				}
			}
			fmt.Printf("%-8s %-7s %12v %12.1f %8.2f %10v %8.1fMB %s\n", fmt.Sprintf("%dMB", mb), name,
				m.dur.Round(time.Millisecond), float64(mb)/m.dur.Seconds(), base.dur.Seconds()/m.dur.Seconds(),
				medianCPU(res[name]).Round(time.Millisecond), float64(m.maxRSS)/1024, ok)
		}
		for _, name := range []string{"relay", "alone"} {
			label := "relay wrap (hub)         "
			if name == "alone" {
				label = "relay wrap --hub none    "
			}
			summary = append(summary, fmt.Sprintf("pass-through %3dMB cat, %s vs script -qc: %.2fx by wall clock, CPU %.2fx script's (bar >= 0.95x with the hub)",
				mb, label, base.dur.Seconds()/median(res[name]).dur.Seconds(),
				medianCPU(res[name]).Seconds()/medianCPU(res["script"]).Seconds()))
		}
	}
	for _, l := range summary {
		fmt.Println(l)
	}
	return nil
}

// medianCPU returns the median CPU time of rs.
func medianCPU(rs []result) time.Duration {
	c := make([]time.Duration, len(rs))
	for i, r := range rs {
		c[i] = r.cpu
	}
	slices.Sort(c)
	return c[len(c)/2]
}

// writeText writes size bytes of log-like text lines and returns the SHA-256
// of what a terminal shows for it (newlines become CR LF). It streams, so
// that this program stays small: a child's peak RSS counts the parent's
// memory from before exec.
func writeText(path string, size int) ([32]byte, error) {
	words := strings.Fields("the agent relay wrote a line of text with @relay:Bob some words and numbers 12345 into its terminal while tests ran")
	r := rand.New(rand.NewPCG(1, 2))
	f, err := os.Create(path)
	if err != nil {
		return [32]byte{}, err
	}
	defer f.Close()
	h := sha256.New()
	var line []byte
	for written := 0; written < size; {
		// Each line starts with a word, so the mention of @relay:Bob is
		// always mid-line and never fires: every byte out is a byte in.
		line = append(line[:0], "log: "...)
		for i, n := 0, 5+r.IntN(15); i < n; i++ {
			line = append(line, words[r.IntN(len(words))]...)
			line = append(line, ' ')
		}
		line = append(line, '\n')
		line = line[:min(len(line), size-written)]
		if _, err := f.Write(line); err != nil {
			return [32]byte{}, err
		}
		h.Write(bytes.ReplaceAll(line, []byte("\n"), []byte("\r\n")))
		written += len(line)
	}
	return [32]byte(h.Sum(nil)), f.Close()
}

func measure(argv []string, home string, want [32]byte) (result, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "RELAY_HOME="+home)
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		return result{}, err
	}
	defer stdin.Close()
	cmd.Stdin = stdin
	out, err := cmd.StdoutPipe()
	if err != nil {
		return result{}, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	// Sample the peak RSS (VmHWM) while it runs: rusage's ru_maxrss would
	// count this program's memory from before exec.
	stop := make(chan struct{})
	peak := make(chan int64)
	go func() {
		var hwm int64
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if v := vmHWM(cmd.Process.Pid); v > hwm {
				hwm = v
			}
			select {
			case <-stop:
				peak <- hwm
				return
			case <-t.C:
			}
		}
	}()
	h := sha256.New()
	n, _ := io.Copy(h, out)
	close(stop)
	rss := <-peak
	if err := cmd.Wait(); err != nil {
		return result{}, fmt.Errorf("%v: %w", argv, err)
	}
	d := time.Since(start)
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return result{dur: d, cpu: cpu, bytes: n, maxRSS: rss, ok: [32]byte(h.Sum(nil)) == want}, nil
}

// vmHWM returns a process's peak resident memory in KiB, 0 if unknown.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

func median(rs []result) result {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b result) int { return int(a.dur - b.dur) })
	return s[len(s)/2]
}
