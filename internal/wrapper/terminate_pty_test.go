package wrapper

import (
	"errors"
	"fmt"
	"log/slog"
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
			// signal is trapped and ends the loop after the line in hand
			// (TestTerminateLetsChildActOnTypedLine is the shell that
			// traps nothing).
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

// TestTerminateLetsChildActOnTypedLine: a program that read the line
// relay typed gets to act on it before the signal ends it. The shell here
// traps nothing and spends a while on each line before it notes it, so a
// signal passed on as soon as the line was read from the terminal would
// lose the line with the shell.
func TestTerminateLetsChildActOnTypedLine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "read.txt")
	script := `while IFS= read -r l; do
  i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done
  printf '%s\n' "$l" >> "$1"
done`
	var log testutil.Buffer
	s := startReader(t, script, file, &log)
	if err := s.Input().Inject(func(write func([]byte) error) error {
		return write([]byte("one\r"))
	}); err != nil {
		t.Fatal(err)
	}
	s.terminate(syscall.SIGTERM)
	if code := s.Wait(); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit status %d, want %d", code, 128+int(syscall.SIGTERM))
	}
	if data, _ := os.ReadFile(file); string(data) != "one\n" {
		t.Errorf("the child noted %q, want %q\n%s", data, "one\n", log.String())
	}
}

// TestTerminateWaitsForNoBusyChildUnlessTyped: a child busy with work of
// its own, into which relay typed nothing, is ended without a wait for it
// to settle; one that stays busy after relay typed is ended once the wait
// is over, and the log says so.
func TestTerminateWaitsForNoBusyChildUnlessTyped(t *testing.T) {
	for _, typed := range []bool{false, true} {
		t.Run(fmt.Sprintf("typed=%v", typed), func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "read.txt")
			// Reads one line, then is busy until it is ended.
			script := `IFS= read -r l; printf '%s\n' "$l" >> "$1"; while :; do :; done`
			var log testutil.Buffer
			s := startReader(t, script, file, &log)
			if err := s.Input().Inject(func(write func([]byte) error) error {
				return write([]byte("go\r"))
			}); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
				if data, _ := os.ReadFile(file); string(data) != "go\n" {
					return errors.New("the line was not read yet")
				}
				return nil
			})
			if !typed {
				s.input.lastInject.Store(0) // as if the human had typed it
			}
			s.terminate(syscall.SIGTERM)
			if code := s.Wait(); code != 128+int(syscall.SIGTERM) {
				t.Errorf("exit status %d, want %d", code, 128+int(syscall.SIGTERM))
			}
			const busy = "still busy with its input"
			if got := strings.Contains(log.String(), busy); got != typed {
				t.Errorf("log says %q: %v, want %v\n%s", busy, got, typed, log.String())
			}
		})
	}
}

// startReader starts script in a wrapper session, with file as its $1 and
// the session's log in log.
func startReader(t *testing.T, script, file string, log *testutil.Buffer) *Session {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	s, err := Start(Options{
		Command: []string{"sh", "-c", script, "reader", file},
		Dir:     filepath.Dir(file),
		Stdin:   r,
		Stdout:  &testutil.Buffer{},
		Logger:  slog.New(slog.NewTextHandler(log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
