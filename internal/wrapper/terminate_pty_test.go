package wrapper

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestTerminateLetsChildReadTypedLines: SIGTERM (or SIGHUP) to the wrapper
// reaches the child only once it has read the lines already typed into
// its terminal (the kernel drops unread input with the child), and nothing
// is typed after it: Inject returns ErrEnding.
func TestTerminateLetsChildReadTypedLines(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "read.txt")
			// Busy for a second after each line: the next one waits. The
			// signal is trapped and ends the loop after the line in hand:
			// relay promises the line was read from the terminal when the
			// signal comes, not that the program had done anything with it.
			script := `trap 'stop=1' TERM HUP
while [ -z "$stop" ] && IFS= read -r l; do printf '%s\n' "$l" >> "$1"; sleep 1; done
exit "$2"`
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			s, err := Start(Options{
				Command: []string{"sh", "-c", script, "reader", file, strconv.Itoa(128 + int(sig))},
				Dir:     dir,
				Stdin:   r,
				Stdout:  &testutil.Buffer{},
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Input().Inject(func(write func([]byte) error) error {
				return write([]byte("one\rtwo\r"))
			}); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
				if data, _ := os.ReadFile(file); !strings.Contains(string(data), "one") {
					return errors.New("the first line was not read yet")
				}
				return nil
			})
			s.terminate(sig)
			testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
				err := s.Input().Inject(func(func([]byte) error) error { return nil })
				if !errors.Is(err, ErrEnding) {
					return errors.New("Inject still types")
				}
				return nil
			})
			if code := s.Wait(); code != 128+int(sig) {
				t.Errorf("exit status %d, want %d", code, 128+int(sig))
			}
			if data, _ := os.ReadFile(file); string(data) != "one\ntwo\n" {
				t.Errorf("the child read %q, want %q", data, "one\ntwo\n")
			}
		})
	}
}
