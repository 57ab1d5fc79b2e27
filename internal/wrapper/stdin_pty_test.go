//go:build linux

package wrapper

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// pollCalls are the system call numbers of poll(2) and ppoll(2) as
// /proc/PID/task/TID/syscall shows them, by architecture, and the third
// argument each has when it waits without end (poll's timeout -1,
// ppoll's timeout pointer nil).
var pollCalls = map[string]map[string]string{
	"amd64": {"7": "0xffffffffffffffff", "271": "0x0"},
	"arm64": {"73": "0x0"},
}

// threadsInPoll counts this process's threads blocked in poll(2) or
// ppoll(2) without a timeout now (the output loop's waits of a flood have
// one).
func threadsInPoll(t *testing.T, calls map[string]string) int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/syscall")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) > 3 && calls[f[0]] != "" && calls[f[0]] == f[3] {
			n++
		}
	}
	return n
}

// A wrapper whose stdin is the human's terminal reads the human's keys
// without a thread blocked in poll(2) on it (the terminal is read on the
// netpoller, through a file of its own): with GOMAXPROCS 1 such a thread
// held the wrapper's one processor, and nothing else of the wrapper ran
// until the runtime's monitor took it back, up to 20 ms later (issue 34).
// The keys still reach the child, the terminal's own file (the shell's)
// stays blocking, and the wrapper ends with its child.
func TestTerminalStdinOnNetpoller(t *testing.T) {
	calls, ok := pollCalls[runtime.GOARCH]
	if !ok {
		t.Skip("poll's system call numbers unknown on", runtime.GOARCH)
	}
	screen, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer screen.Close()
	defer tty.Close()
	out := &testutil.Buffer{}
	s, err := Start(Options{Command: []string{"sh", "-c", "read line; echo got-$line"}, Stdin: tty, Stdout: out, Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() { done <- s.Wait() }()
	if s.stdin.own == nil {
		t.Error("the human's terminal was not opened again for reading")
	}
	// Nothing typed yet: no thread waits in poll(2) without end, at any
	// of 50 looks over a quarter of a second.
	seen := 0
	for range 50 {
		if threadsInPoll(t, calls) > 0 {
			seen++
		}
		time.Sleep(5 * time.Millisecond)
	}
	if seen > 0 {
		t.Errorf("a thread was blocked in poll(2) without end at %d of 50 looks while the human typed nothing", seen)
	}
	if _, err := screen.Write([]byte("hello\r")); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the child did not end after the human's line; screen:\n%s", out.String())
	}
	if !bytes.Contains([]byte(out.String()), []byte("got-hello")) {
		t.Errorf("the human's line did not reach the child; screen:\n%s", out.String())
	}
	flags, err := unix.FcntlInt(tty.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.O_NONBLOCK != 0 {
		t.Error("the human's terminal file (the shell's) was made non-blocking")
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/self/fd/%d", tty.Fd())); err != nil {
		t.Errorf("the human's terminal file was closed: %v", err)
	}
}
