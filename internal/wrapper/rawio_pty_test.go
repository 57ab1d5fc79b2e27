//go:build linux

package wrapper

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// TestOutputThroughHumanTerminal: with a terminal as the human's screen,
// the output loop writes it through a file of its own (raw, non-blocking
// writes: rawio.go) and, when it is full or a chunk is large, through the
// terminal's own file. Every byte of a long output arrives in order though
// the human reads slowly (the terminal fills, the writes wait), and the
// terminal's file the human's shell shares stays blocking.
func TestOutputThroughHumanTerminal(t *testing.T) {
	want, err := exec.Command("seq", "1", "60000").Output()
	if err != nil {
		t.Skip("no seq:", err)
	}
	want = bytes.ReplaceAll(want, []byte("\n"), []byte("\r\n")) // the child's terminal's newline
	screen, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer screen.Close()
	defer tty.Close()
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil { // no second newline translation
		t.Fatal(err)
	}
	keys, keysW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	defer keysW.Close()
	s, err := Start(Options{Command: []string{"seq", "1", "60000"}, Stdin: keys, Stdout: tty, Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	if s.screen == nil {
		t.Error("the human's terminal was not opened for raw writes")
	}
	// The human reads slowly, in small pieces, until all came.
	var got []byte
	buf := make([]byte, 512)
	deadline := time.Now().Add(60 * time.Second)
	for len(got) < len(want) && time.Now().Before(deadline) {
		_ = screen.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := screen.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil && err != io.EOF {
			break
		}
		if len(got) < 4096 {
			flags, err := unix.FcntlInt(tty.Fd(), unix.F_GETFL, 0)
			if err != nil {
				t.Fatal(err)
			}
			if flags&unix.O_NONBLOCK != 0 {
				t.Fatal("the human's terminal file (the shell's) was made non-blocking")
			}
		}
	}
	if code := s.Wait(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("the human's screen got %d bytes, want %d; first difference at %d: %q", len(got), len(want), i,
			fmt.Sprintf("%.40s", got[i:]))
	}
}
