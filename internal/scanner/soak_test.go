//go:build soak

package scanner

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/wrapper"
)

// TestSoakFloodCutLines is issue 20's flood: `cat` of a 50 MB log whose
// lines mention @relay:Bob in mid-line, in a real pseudo-terminal through
// the wrapper's tap into the scanner, while two goroutines keep the CPUs
// busy so that the scanner falls behind, skips and resets its model. No
// command may fire (the rest of a line cut by a skip is not a line start),
// and what reaches the human is byte-exact. `make soak` runs it;
// RELAY_SOAK_RUNS and RELAY_SOAK_MB change its 20 runs of 50 MB.
func TestSoakFloodCutLines(t *testing.T) {
	runs := envInt(t, "RELAY_SOAK_RUNS", 20)
	mb := envInt(t, "RELAY_SOAK_MB", 50)
	file := filepath.Join(t.TempDir(), "flood.log")
	want := writeFloodLog(t, file, mb<<20)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
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

	var skipped int64
	for run := range runs {
		fired, skip, got := catThroughScanner(t, file)
		skipped += skip
		if len(fired) > 0 {
			t.Errorf("run %d: %d commands fired from a flood of mid-line mentions, first %q (skipped %d bytes)", run, len(fired), fired[0], skip)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("run %d: the human's copy is not byte-exact", run)
		}
	}
	t.Logf("%d runs of %d MB: %d bytes skipped in all", runs, mb, skipped)
	if skipped == 0 {
		t.Log("the scanner never fell behind: the cut-line path was not exercised")
	}
}

// catThroughScanner runs `cat file` in a pseudo-terminal as relay wrap
// does and returns the commands the scanner fired, the bytes it skipped
// and the SHA-256 of what the human's side received.
func catThroughScanner(t *testing.T, file string) (fired []string, skipped int64, sum []byte) {
	t.Helper()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	tap := wrapper.NewTap(0)
	s := New(Options{Cols: 80, Rows: 24, Cues: Cues{LineBreaksEnd: true}})
	var mu sync.Mutex
	s.Subscribe(func(e Event) {
		if e.Kind == EventCommand {
			mu.Lock()
			fired = append(fired, e.Command.Target+" "+e.Command.Body)
			mu.Unlock()
		}
	})
	out := &hashWriter{h: sha256.New()}
	ws, err := wrapper.Start(wrapper.Options{
		Command: []string{"cat", file}, Stdin: null, Stdout: out, Tap: tap,
		OnResize: s.Resize,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background(), tap) }()
	if code := ws.Wait(); code != 0 {
		t.Fatalf("cat exited %d", code)
	}
	tap.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the scanner did not finish within 2 minutes of the end of the output")
	}
	mu.Lock()
	defer mu.Unlock()
	return fired, s.Skipped(), out.h.Sum(nil)
}

// writeFloodLog writes about size bytes of log lines, each with a mention
// in mid-line at a varying column, and returns the SHA-256 of the file as a
// terminal shows it (the pseudo-terminal turns each LF into CR LF).
func writeFloodLog(t *testing.T, file string, size int) []byte {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	h := sha256.New()
	var line []byte
	for i, n := 0, 0; n < size; i++ {
		pad := bytes.Repeat([]byte("."), i%37)
		line = fmt.Appendf(line[:0], "2026-01-02T03:04:05.%06dZ INFO req=%d%s forwarded to @relay:Bob x please check item %d\n", i%1000000, i, pad, i)
		w.Write(line)
		h.Write(line[:len(line)-1])
		h.Write([]byte("\r\n"))
		n += len(line)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return h.Sum(nil)
}

type hashWriter struct {
	mu sync.Mutex
	h  hash.Hash
}

func (w *hashWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.h.Write(p)
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}
