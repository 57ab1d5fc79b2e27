package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
	"unsafe"

	"github.com/creack/pty"
)

// The pass-through's human terminal, read by a process of its own.
//
// A person's terminal is a terminal emulator: a process of its own that
// reads the pty's master in a loop. The bench's in-process reader (term,
// pty.go) is a goroutine of this program, which also runs the hub that
// the wrapper joins: the wrapper's traffic to the hub during the flood
// and the Go runtime of a process hosting nats-server are beside that
// reader, and `script`'s run, which talks to no hub, has none of it. So
// the pass-through's main figure is read by readerChild, this program run
// again as `-child reader ARGV...`: it holds the pty's master, reads it
// with plain blocking reads of 64 KiB until EIO, waits for the command
// and reports to the bench on its stdout, a pipe. The hub stays in the
// bench's process, apart from both, as `relay up` runs apart from a
// user's terminal. (docs/performance-flood.md, "What reads the human's
// terminal", has both readers' figures: on a quiet machine this one, which
// takes the output faster, is the harder measure.)

// readReport is what readerChild tells the bench of one run, times
// measured on its own clock.
type readReport struct {
	Wall  time.Duration // from the command's start until it exited and its output ended
	Flow  time.Duration // from the first byte read to the last
	CPU   time.Duration // the command's, with the children it waited for
	Shown int64
	Err   string // the command's exit error, if any
}

// readerChild runs argv with a new pty (120x40) as its controlling
// terminal, stdin, stdout and stderr, reads the pty until every writer is
// gone, waits for argv and writes a readReport as JSON to stdout.
func readerChild(argv []string) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		fail(err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		fail(err)
	}
	// Fd puts the master back in blocking mode, off the netpoller: each
	// read below waits in the kernel, as a terminal emulator's read
	// thread does.
	fd := ptmx.Fd()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// Pdeathsig: the bench kills this reader at its timeout, and the
	// command, in a session of its own, goes with it.
	cmd.SysProcAttr = dieWithParent(&syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0})
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	tty.Close()
	var rep readReport
	var first, last time.Time
	buf := make([]byte, 64<<10)
	for {
		// A raw system call: the read blocks this thread and nothing else
		// of the runtime runs meanwhile (a Go system call that blocks
		// wakes its monitor thread, a cost no C terminal pays).
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 || n == 0 {
			break // EIO: every copy of the pty's other side is closed
		}
		last = time.Now()
		if rep.Shown == 0 {
			first = last
		}
		rep.Shown += int64(n)
	}
	if err := cmd.Wait(); err != nil {
		rep.Err = err.Error()
	}
	rep.Wall = time.Since(t0)
	rep.Flow = last.Sub(first)
	if ps := cmd.ProcessState; ps != nil {
		rep.CPU = ps.UserTime() + ps.SystemTime()
	}
	ptmx.Close()
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		fail(err)
	}
}

// timedApart runs argv under readerChild, a process of its own, and
// returns what it measured.
func timedApart(h *harness, argv []string) (timing, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.self, append([]string{"-child", "reader"}, argv...)...)
	cmd.Env, cmd.Dir, cmd.Stderr = h.env(), h.dir, os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return timing{}, fmt.Errorf("reader of %v: %w", argv, err)
	}
	var rep readReport
	if err := json.NewDecoder(bytes.NewReader(out)).Decode(&rep); err != nil {
		return timing{}, fmt.Errorf("reader of %v: %w", argv, err)
	}
	m := timing{wall: rep.Wall, flow: rep.Flow, cpu: rep.CPU, shown: rep.Shown}
	if rep.Err != "" {
		return m, fmt.Errorf("%v: %s", argv, rep.Err)
	}
	return m, nil
}
