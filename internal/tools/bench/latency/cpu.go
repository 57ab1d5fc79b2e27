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

// cpuTime returns the CPU time (user and system) the process pid has used
// so far, or 0 where /proc does not say (not Linux). The wall clock of a
// shared machine is noisy; the CPU a message costs is not.
func cpuTime(pid int) time.Duration {
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
	// Fields 14 and 15 of stat (utime, stime): 12 and 13 after the command.
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	k, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(u+k) * clockTick
}

// cpuOf sums the CPU time of the wrapper processes ps.
func cpuOf(ps ...*wrapped) time.Duration {
	var d time.Duration
	for _, p := range ps {
		if p != nil && p.cmd.Process != nil {
			d += cpuTime(p.cmd.Process.Pid)
		}
	}
	return d
}

// perMessage formats CPU time spent on n messages.
func perMessage(d time.Duration, n int) string {
	if n == 0 || d == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f µs/msg", float64(d.Microseconds())/float64(n))
}
