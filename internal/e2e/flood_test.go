package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestFloodNeverFires is issue 20's flood through the real binary:
// `relay wrap --hub none -- cat FILE` of a log whose every line mentions
// @relay:Bob in mid-line, while two CPU-bound loops keep the machine busy
// so that the scanner falls behind, skips and resets its screen model. The
// rest of a line cut by a skip is not a line start: nothing fires (a fired
// command would type "Not sent: this agent runs without a hub" into the
// child, and its echo would break the copy), and what reaches the human is
// byte-exact, every run.
func TestFloodNeverFires(t *testing.T) {
	if testing.Short() {
		t.Skip("floods a terminal with megabytes")
	}
	file := filepath.Join(t.TempDir(), "flood.log")
	want := floodLog(t, file, floodMB<<20)

	ctx, stop := context.WithCancel(context.Background())
	var spin sync.WaitGroup
	for range 2 {
		spin.Add(1)
		go func() { // a CPU-bound loop
			defer spin.Done()
			x := 0
			for ctx.Err() == nil {
				for i := range 1 << 16 {
					x += i
				}
			}
			runtime.KeepAlive(x)
		}()
	}
	defer spin.Wait()
	defer stop()

	skips := 0
	for run := range floodRuns {
		home := filepath.Join(t.TempDir(), "home")
		env := append(baseEnv(t), "RELAY_HOME="+home, "RELAY_HUB=none", "TERM=xterm-256color")
		tm := ptytest.Start(t, ptytest.Options{Env: env, Cols: 80, Rows: 24}, relayBin, "wrap", "--name", "Flood", "--", "cat", file)
		if code := tm.Wait(5 * time.Minute); code != 0 {
			t.Fatalf("run %d: exit %d", run, code)
		}
		testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
			if n := tm.OutputLen(); n < len(want) {
				return fmt.Errorf("%d of %d bytes arrived", n, len(want))
			}
			return nil
		})
		out := tm.Output()
		if i := bytes.Index(out, []byte("[relay]")); i >= 0 {
			t.Errorf("run %d: relay typed into the child at byte %d: %q", run, i, out[i:min(len(out), i+120)])
		}
		if !bytes.Equal(out, want) {
			i := 0
			for i < len(out) && i < len(want) && out[i] == want[i] {
				i++
			}
			t.Errorf("run %d: the human's copy differs at byte %d (got %d bytes, want %d)", run, i, len(out), len(want))
		}
		log, _ := os.ReadFile(filepath.Join(home, "logs", "wrap-Flood.log"))
		skips += strings.Count(string(log), "scanner fell behind")
		if strings.Contains(string(log), `msg=command `) {
			t.Errorf("run %d: a command fired from the flood; the wrapper's log:\n%s", run, lastLines(string(log), 20))
		}
	}
	t.Logf("%d runs of %d MB: the scanner fell behind and skipped %d times", floodRuns, floodMB, skips)
}

// floodLog writes about size bytes of log lines, each with a mention in
// mid-line at a varying column, and returns the file as a terminal shows
// it (each LF as CR LF).
func floodLog(t *testing.T, file string, size int) []byte {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var shown bytes.Buffer
	shown.Grow(size + size/16)
	var line []byte
	for i, n := 0, 0; n < size; i++ {
		pad := bytes.Repeat([]byte("."), i%37)
		line = fmt.Appendf(line[:0], "2026-01-02T03:04:05.%06dZ INFO req=%d%s forwarded to @relay:Bob x please check item %d\n", i%1000000, i, pad, i)
		w.Write(line)
		shown.Write(line[:len(line)-1])
		shown.WriteString("\r\n")
		n += len(line)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return shown.Bytes()
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
