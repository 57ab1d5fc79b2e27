//go:build linux && !race && !lean

package hub

import (
	"strings"
	_ "unsafe" // go:linkname
)

// procStatFile is nats-server's /proc/PID/stat path (package pse), which
// the package's init starts reading every second, for the CPU figure of
// the server's monitoring, in every process that links nats-server: every
// relay process, hub or not.
//
//go:linkname procStatFile github.com/nats-io/nats-server/v2/server/pse.procStatFile
var procStatFile string

// StopProcSampling ends nats-server's once-a-second reading of
// /proc/self/stat (a wake-up a second for every idle wrapper): its next
// read fails, and the sampling does not schedule itself again. relay reads
// none of the figures it keeps (the server's varz and statsz CPU and
// memory, which then read zero). Call it once, early.
//
// The new path has the old one's length, so the sampler, which may be
// reading it at that moment on its timer, sees either whole; a data race
// all the same, so race builds (tests) keep the sampling.
func StopProcSampling() {
	if strings.HasPrefix(procStatFile, "/proc/") && !strings.ContainsRune(procStatFile, 0) {
		procStatFile = procStatFile[:len(procStatFile)-1] + "\x00"
	}
}
