//go:build linux

package wrapper

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// pumpRig is a child printing `seq 1 lines` (or, with lines 0, `yes`
// without end) into a raw pty and a human's terminal that is a pipe read
// by a `cat` of its own into a file, started after delay.
type pumpRig struct {
	r      *threadReader
	term   *os.File // the terminal's non-blocking write end
	termFd int
	shown  string // the file the terminal's reader writes
	reader *exec.Cmd
	child  *exec.Cmd
	want   []byte
	done   chan error // the child's exit
}

func newPumpRig(t *testing.T, lines int, delay time.Duration) *pumpRig {
	t.Helper()
	argv := []string{"seq", "1", strconv.Itoa(lines)}
	if lines == 0 {
		argv = []string{"yes", "a line of output without end"}
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		t.Skip(err)
	}
	var want []byte
	if lines > 0 {
		var err error
		if want, err = exec.Command(argv[0], argv[1:]...).Output(); err != nil {
			t.Fatal(err)
		}
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	p, err := pollable(ptmx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatal(err)
	}
	rig := &pumpRig{r: newThreadReader(p), want: want, done: make(chan error, 1)}
	if rig.r == nil {
		t.Fatal("no thread reader")
	}
	tr, tw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tw.Close() })
	rig.term = tw
	rc, err := tw.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Control(func(fd uintptr) { rig.termFd = int(fd) }); err != nil {
		t.Fatal(err)
	}
	rig.shown = filepath.Join(t.TempDir(), "shown")
	rig.reader = exec.Command("sh", "-c", `sleep "$1"; exec cat > "$2"`, "sh",
		strconv.FormatFloat(delay.Seconds(), 'f', 3, 64), rig.shown)
	rig.reader.Stdin = tr
	if err := rig.reader.Start(); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	child := exec.Command(argv[0], argv[1:]...)
	child.Stdout = tty
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the pty reads EIO once the child is gone
	rig.child = child
	go func() { rig.done <- child.Wait() }()
	return rig
}

// run pumps until the child's output ended, with tap and slow as the
// pump's, and returns what the terminal's reader got.
func (rig *pumpRig) run(t *testing.T, tap, slow func([]byte)) []byte {
	t.Helper()
	var mu sync.Mutex
	to := pumpTo{fd: rig.termFd, mu: &mu, slow: slow, tap: tap}
	buf := make([]byte, 16<<10)
	end := time.Now().Add(2 * time.Minute)
	var err error
	for time.Now().Before(end) {
		// errQuiet: the child paused (a loaded machine); the output loop
		// waits on the netpoller, this for the pty's next byte.
		if err = rig.r.pump(buf, to); !errors.Is(err, errQuiet) {
			break
		}
	}
	if err == nil || errors.Is(err, errQuiet) {
		t.Fatalf("the pump ended with %v, want the end of the child's output", err)
	}
	if err := <-rig.done; err != nil {
		t.Errorf("seq: %v", err)
	}
	rig.term.Close()
	if err := rig.reader.Wait(); err != nil {
		t.Fatalf("the terminal's reader: %v", err)
	}
	shown, err := os.ReadFile(rig.shown)
	if err != nil {
		t.Fatal(err)
	}
	return shown
}

// tapReader collects what a tap hands out and counts the bytes it
// dropped.
func tapReader(tap *Tap) (got func() ([]byte, int64)) {
	done := make(chan struct{})
	var b []byte
	var skipped int64
	go func() {
		defer close(done)
		for {
			chunk, n, err := tap.Next(context.Background())
			skipped += n
			b = append(b, chunk...)
			if err != nil {
				return
			}
		}
	}()
	return func() ([]byte, int64) {
		tap.Close()
		<-done
		return b, skipped
	}
}

// TestPumpGivesTheTapsReaderItsTurns: with the wrapper's one processor
// (GOMAXPROCS 1) the pump waits on either end holding it, and must give
// the rest of the wrapper its turn: after each hand-over to the tap (at
// most a buffer, 16 KB here) its reader takes what is pending, so a tap of
// 64 KB drops nothing of a 10 MB flood. Without the turns the tap's reader
// runs only when the runtime preempts the pump, every 10 ms, and most of
// the flood is dropped. Every byte reaches the terminal in order.
func TestPumpGivesTheTapsReaderItsTurns(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rig := newPumpRig(t, 1500000, 0)
	tap := NewTap(64 << 10)
	tapped := tapReader(tap)
	shown := rig.run(t, func(p []byte) { tap.Write(p) }, func(p []byte) {
		if _, err := writeAll(rig.term, p); err != nil {
			t.Errorf("slow write: %v", err)
		}
	})
	if !bytes.Equal(shown, rig.want) {
		t.Errorf("the terminal showed %d bytes, want %d (in order: %v)", len(shown), len(rig.want), bytes.Equal(shown, rig.want))
	}
	got, skipped := tapped()
	if skipped != 0 || !bytes.Equal(got, rig.want) {
		t.Errorf("the tap dropped %d bytes and handed out %d, want all %d", skipped, len(got), len(rig.want))
	}
}

// TestPumpStalledTerminal: a terminal that takes nothing for a while (its
// reader starts 300 ms late; the pipe holds 64 KB) is written the
// ordinary, blocking way after streamGap, and every byte reaches it and
// the tap in order.
func TestPumpStalledTerminal(t *testing.T) {
	rig := newPumpRig(t, 400000, 300*time.Millisecond)
	var slowCalls, slowBytes atomic.Int64
	var tapped []byte
	shown := rig.run(t, func(p []byte) {
		tapped = append(tapped, p...)
	}, func(p []byte) {
		slowCalls.Add(1)
		slowBytes.Add(int64(len(p)))
		if _, err := writeAll(rig.term, p); err != nil {
			t.Errorf("slow write: %v", err)
		}
	})
	if slowCalls.Load() == 0 {
		t.Error("the stalled terminal was never written the ordinary way")
	}
	if !bytes.Equal(shown, rig.want) {
		t.Errorf("the terminal showed %d bytes, want %d", len(shown), len(rig.want))
	}
	if !bytes.Equal(tapped, rig.want) {
		t.Errorf("the tap got %d bytes, want %d", len(tapped), len(rig.want))
	}
	t.Logf("%d slow writes, %d bytes", slowCalls.Load(), slowBytes.Load())
}

// TestPumpEndsByTheDrainDeadline: after the child's exit a grandchild that
// prints without end (here `yes`) holds the flood; the pump ends by the
// drain's deadline, with what it read on the terminal.
func TestPumpEndsByTheDrainDeadline(t *testing.T) {
	rig := newPumpRig(t, 0, 0)
	defer func() {
		_ = rig.child.Process.Kill()
		<-rig.done
		rig.term.Close()
		_ = rig.reader.Wait()
	}()
	var mu sync.Mutex
	to := pumpTo{fd: rig.termFd, mu: &mu, slow: func(p []byte) { _, _ = writeAll(rig.term, p) }, tap: func([]byte) {}}
	buf := make([]byte, 64<<10)
	t0 := time.Now()
	rig.r.drainBy(t0.Add(100 * time.Millisecond))
	var err error
	for {
		// Under load `yes` may pause longer than streamGap: the output
		// loop then waits on the netpoller and comes back; so does this.
		err = rig.r.pump(buf, to)
		if !errors.Is(err, errQuiet) || time.Since(t0) > 10*time.Second {
			break
		}
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("an endless flood ended with %v, want the deadline", err)
	}
	if d := time.Since(t0); d < 100*time.Millisecond || d > 5*time.Second {
		t.Errorf("ended after %v, deadline 100ms", d)
	}
}

// TestQuietChildLeavesTheFloodPath: the pump hands output on without the
// output loop's take, so the loop must note the time itself when a flood
// ends; otherwise it went straight back into the pump, a 2 ms wait and a
// read at a time (an idle wrapped bash: 1.5 s of CPU a minute instead of
// 0.03). A child that prints a prompt and then nothing leaves the loop on
// the netpoller.
func TestQuietChildLeavesTheFloodPath(t *testing.T) {
	screen, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer screen.Close()
	defer tty.Close()
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, screen) }()
	keys, keysW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	defer keysW.Close()
	s, err := Start(Options{Command: []string{"sh", "-c", "printf '$ '; exec sleep 30"}, Stdin: keys, Stdout: tty, Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		s.End()
		s.Wait()
	}()
	if s.thread == nil {
		t.Skip("no thread reader")
	}
	// 300 ms of quiet: a loop back in the pump would leave it about 150
	// times (a 2 ms wait each).
	time.Sleep(300 * time.Millisecond)
	if n := s.floods.Load(); n > 5 {
		t.Errorf("the output loop left the netpoller %d times for a child that printed one prompt", n)
	}
}
