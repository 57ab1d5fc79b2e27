package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of the CPU times in /proc/PID/stat (USER_HZ, 100
// on every Linux in use).
const clockTick = 10 * time.Millisecond

// cpuTime returns the CPU time process pid has used so far: the time its
// threads ran, to the nanosecond (/proc/PID/task/*/schedstat), or where
// that is missing user and system time in clock ticks (/proc/PID/stat:
// at 10 ms a tick, an idle wrapper's minute is a handful of ticks); 0
// where /proc says neither.
func cpuTime(pid int) time.Duration {
	if d, ok := ranTime(pid); ok {
		return d
	}
	return tickTime(pid)
}

// ranTime sums the run time of pid's threads. A thread that exited is no
// longer counted: the Go runtime keeps its threads.
func ranTime(pid int) (time.Duration, bool) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	var total int64
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return 0, false
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		total += ns
	}
	return time.Duration(total), true
}

// tickTime returns user and system time from /proc/PID/stat.
func tickTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	k, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(u+k) * clockTick
}

// status returns a field of /proc/PID/status in KiB (VmRSS, VmHWM), 0 if
// unknown.
func status(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

// mb formats KiB as MB.
func mb(kib int64) string { return fmt.Sprintf("%.1f MB", float64(kib)/1024) }

// loadAvg returns the machine's one-minute load average, "?" if unknown:
// five helpers share it, and CPU seconds are not immune to the load.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// rollup returns a field of /proc/PID/smaps_rollup in KiB (Pss,
// Pss_Anon, Pss_File), 0 if unknown: the proportional set size counts a
// page shared by n processes as 1/n of it, what one more wrapper costs.
func rollup(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

// memSplit formats a wrapper's resident memory now, split: its own
// (RssAnon: heap, stacks, the runtime's), the relay binary's pages
// (RssFile, shared by every wrapper and in the page cache anyway) and
// shared memory (RssShmem), with the proportional set size.
func memSplit(pid int) string {
	return fmt.Sprintf("own %s, binary %s, shmem %s; PSS %s", mb(status(pid, "RssAnon")), mb(status(pid, "RssFile")),
		mb(status(pid, "RssShmem")), mb(rollup(pid, "Pss")))
}
