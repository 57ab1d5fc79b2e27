package wrapper

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// gatedWriter is a human's screen that stops taking output after its
// first write until it is opened: a slow terminal on a loaded machine.
type gatedWriter struct {
	first chan struct{} // closed at the first write
	open  chan struct{} // closed to let writes through

	once sync.Once
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.first) })
	<-w.open
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *gatedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestExitDrainOutlivesASlowScreen: the child's last output reaches the
// human in full even when writing to their screen blocked past the drain
// deadline after the child's exit (CI lost the last 2.5 KB of an 8 MB
// flood at load 20): the deadline bounds waiting for output, not output
// already in the child's terminal.
func TestExitDrainOutlivesASlowScreen(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The first line is read while the rest is not yet written; the rest
	// goes into the terminal once the wrapper is stuck writing the first,
	// and the child exits at once.
	tail := strings.Repeat("0123456789abcdef", 128) // 2 KiB, within the pty's buffer
	script := `printf 'first\n'; read x < "$1"; printf '%s' "$2"; printf 'END'`
	out := &gatedWriter{first: make(chan struct{}), open: make(chan struct{})}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, err := Start(Options{Command: []string{"sh", "-c", script, "child", fifo, tail}, Dir: dir, Stdin: r, Stdout: out})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		select {
		case <-out.open:
		default:
			close(out.open)
		}
	}()
	select {
	case <-out.first:
	case <-time.After(10 * time.Second):
		t.Fatal("the child's first line never reached the screen")
	}
	if err := os.WriteFile(fifo, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the child did not exit")
	}
	// The screen stays stuck until the drain's deadline has passed: that
	// passing is the condition under test, so time is what is waited for.
	time.Sleep(drainAfterExit + 250*time.Millisecond)
	close(out.open)
	if code := s.Wait(); code != 0 {
		t.Errorf("exit status %d", code)
	}
	got := strings.ReplaceAll(out.String(), "\r\n", "\n")
	if want := "first\n" + tail + "END"; got != want {
		t.Errorf("the screen got %d bytes ending %q, want %d ending in END", len(got), got[max(0, len(got)-20):], len(want))
	}
}
