//go:build linux

package wrapper

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// TestThreadCopyEveryByteToTerminalAndTap: on Linux the child's output
// is read on a thread of its own and a flood is handed on in chunks of up
// to 64 KB (outthread_linux.go). Every byte of a 3 MB flood reaches the
// human's terminal and the tap, in order; the output loop reads on its
// thread, not through the netpoller.
func TestThreadCopyEveryByteToTerminalAndTap(t *testing.T) {
	const lines = 400000 // about 2.7 MB from seq: more than the tap's limit if the scanner fell behind
	want, err := exec.Command("seq", "1", strconv.Itoa(lines)).Output()
	if err != nil {
		t.Skip("no seq:", err)
	}
	want = bytes.ReplaceAll(want, []byte("\n"), []byte("\r\n"))
	screen, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer screen.Close()
	defer tty.Close()
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatal(err)
	}
	keys, keysW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	defer keysW.Close()
	tap := NewTap(8 << 20) // room for all of it: no byte is dropped, whatever the reader's pace
	tapped := make(chan []byte, 1)
	go func() {
		var got []byte
		for {
			chunk, skipped, err := tap.Next(context.Background())
			if skipped != 0 {
				t.Errorf("the tap dropped %d bytes", skipped)
			}
			got = append(got, chunk...)
			if err != nil {
				tapped <- got
				return
			}
		}
	}()
	s, err := Start(Options{Command: []string{"seq", "1", strconv.Itoa(lines)}, Stdin: keys, Stdout: tty, Cols: 80, Rows: 24, Tap: tap})
	if err != nil {
		t.Fatal(err)
	}
	if s.thread == nil {
		t.Fatal("the output is not read on a thread of its own")
	}
	var got []byte
	buf := make([]byte, 64<<10)
	deadline := time.Now().Add(60 * time.Second)
	for len(got) < len(want) && time.Now().Before(deadline) {
		_ = screen.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := screen.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil && err != io.EOF {
			break
		}
	}
	if code := s.Wait(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	tap.Close()
	if !bytes.Equal(got, want) {
		t.Errorf("the human's screen got %d bytes, want %d (equal: %v)", len(got), len(want), bytes.Equal(got, want))
	}
	select {
	case tg := <-tapped:
		if !bytes.Equal(tg, want) {
			t.Errorf("the tap got %d bytes, want %d", len(tg), len(want))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the tap never ended")
	}
}

// TestThreadReaderFlood: a flood is read until the pty stays quiet for
// streamGap (errQuiet: back to the netpoller), everything handed over; a
// flood that goes on after the child exited ends by the drain's deadline.
func TestThreadReaderFlood(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	p, err := pollable(ptmx)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatal(err)
	}
	r := newThreadReader(p)
	if r == nil {
		t.Fatal("no thread reader")
	}
	line := bytes.Repeat([]byte("x"), 1000)
	if _, err := tty.Write(bytes.Repeat(line, 3)); err != nil {
		t.Fatal(err)
	}
	var got []byte
	err = r.flood(make([]byte, 64<<10), func(b []byte) { got = append(got, b...) })
	if !errors.Is(err, errQuiet) {
		t.Errorf("a flood that stopped ended with %v, want errQuiet", err)
	}
	if len(got) != 3000 {
		t.Errorf("handed over %d bytes, want 3000", len(got))
	}

	stop := make(chan struct{})
	wrote := make(chan struct{})
	go func() { // a grandchild that goes on printing, for 10 s at most
		defer close(wrote)
		end := time.Now().Add(10 * time.Second)
		for time.Now().Before(end) {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := tty.Write(line); err != nil {
				return
			}
		}
	}()
	defer func() { close(stop); p.Close(); <-wrote }()
	t0 := time.Now()
	r.drainBy(t0.Add(100 * time.Millisecond))
	// Under load the writer may pause longer than streamGap: the output
	// loop then waits on the netpoller and comes back; so does this.
	for {
		err = r.flood(make([]byte, 64<<10), func([]byte) {})
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
