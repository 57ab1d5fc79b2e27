package wrapper

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestPastedLineIsTheHumans: keys that type a line and submit it in one
// read (a paste ending in Enter, bracketed or not) mark the human's line
// in the order of the output as keys typed one by one do: the echo of the
// line is the human's, what the command prints after it the child's own.
// Before, one read left the line unfinished neither before nor after it,
// so HumanLineInOutput was never called and the prompt row holding the
// pasted command read as the child's own output.
func TestPastedLineIsTheHumans(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, c := range []struct{ name, keys, echo, out string }{
		{"plain paste", "echo plain-$((6*7))\r", "echo plain-$((6*7))", "plain-42"},
		{"bracketed paste", "\x1b[200~echo bracketed-$((6*7))\x1b[201~\r", "bracketed-$((6*7))", "bracketed-42"},
		{"multi-line bracketed paste", "\x1b[200~echo multi-$((6*7)) \\\r  line2\x1b[201~\r", "line2", "multi-42 line2"},
		// Of two lines in one read, the first is marked; the second is
		// echoed after the first one's output (not counted: a limit).
		{"two lines", "echo one-$((6*7))\recho two-$((6*7))\r", "echo one-$((6*7))", "one-42"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			tap := NewTap(0)
			var mu sync.Mutex
			var seen strings.Builder // the output as the screen model reads it, with the human's line marked
			s, err := Start(Options{
				Command: []string{"bash", "--norc", "--noprofile", "-i"},
				Dir:     dir,
				Env:     append(os.Environ(), "HOME="+dir, "PS1=$ ", "TERM=xterm"),
				Stdin:   r, Stdout: &testutil.Buffer{}, Tap: tap,
				HumanLineInOutput: func(unfinished bool) {
					mu.Lock()
					defer mu.Unlock()
					if unfinished {
						seen.WriteString("«H»")
					} else {
						seen.WriteString("«/H»")
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					chunk, _, err := tap.Next(ctx)
					if err != nil {
						return
					}
					mu.Lock()
					seen.Write(chunk)
					mu.Unlock()
				}
			}()
			t.Cleanup(func() {
				s.terminate(syscall.SIGHUP)
				w.Close()
				s.Wait()
				r.Close()
				tap.Close()
				cancel()
				<-done
			})
			text := func() string { mu.Lock(); defer mu.Unlock(); return seen.String() }
			testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
				if !strings.Contains(text(), "$ ") {
					return os.ErrNotExist
				}
				return nil
			})
			if _, err := w.Write([]byte(c.keys)); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
				if !strings.Contains(text(), c.out+"\r\n") || !strings.Contains(text(), "«/H»") {
					return os.ErrNotExist
				}
				return nil
			})
			got := text()
			start, end := strings.Index(got, "«H»"), strings.Index(got, "«/H»")
			echo, out := strings.Index(got, c.echo), strings.Index(got, c.out+"\r\n")
			if start < 0 || !(start < echo && echo < end && end < out) {
				t.Fatalf("want «H» … the echo %q … «/H» … the output %q; the output read:\n%q", c.echo, c.out, got)
			}
		})
	}
}
