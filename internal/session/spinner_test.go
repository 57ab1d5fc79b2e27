package session

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents/registry"
	"github.com/relayhq/relay/internal/hub/hubtest"
)

// spinnerChild draws a "Thinking…" status row in place every 20 ms, and
// prints a command on a line of its own between two frames after 30 of
// them. It draws 50 frames more once the file named by its argument
// exists (at most 3,000 in all), then exits.
const spinnerChild = `
import os, sys, time
w = sys.stdout.write
w("> review the repo\r\n\r\nReading the code.\r\n\r\n")
g = "·✢✳✶✻✽"
left = 3000
for i in range(3000):
    if left > 50 and os.path.exists(sys.argv[1]):
        left = 50
    left -= 1
    if left < 0:
        break
    w("\r\x1b[2K%s Thinking… (%ds)" % (g[i % 6], i // 50))
    if i == 30:
        w("\r\x1b[2K@relay:Bob please review the migration\r\n")
    sys.stdout.flush()
    time.sleep(0.02)
`

// TestCommandBetweenSpinnerFramesReachesPeer: a wrapped program's command
// printed between two frames of a spinner that keeps turning reaches its
// peer once, while the spinner turns (issue 34: the churn the scanner
// skips never hides a command). The whole path: pty, output loop, tap,
// scanner and its clock, session, hub.
func TestCommandBetweenSpinnerFramesReachesPeer(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	prof, err := registry.For("", py)
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.Start(t)
	bob := newPeer(t, h.URL(), h.Token(), "Bob")
	ctx := context.Background()
	stop := filepath.Join(t.TempDir(), "stop")
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{
			Name: "Alice", Workspace: "default", Home: t.TempDir(), Hub: h.URL(), Token: h.Token(),
			NoPrimer: true, NoMCP: true, Profile: prof, Stdout: io.Discard, Dir: t.TempDir(),
			Command: py, Args: []string{"-c", spinnerChild, stop},
		})
		done <- err
	}()
	const want = "please review the migration"
	// It comes while the spinner turns, not only when the program's end
	// reads what its screen holds (the program turns it until told).
	deadline := time.After(40 * time.Second)
	for !slices.Contains(bob.bodies(), want) {
		select {
		case err := <-done:
			t.Fatalf("the program ended (%v) before Bob got the message; he got %q", err, bob.bodies())
		case <-deadline:
			t.Fatalf("Bob never got the message; he got %q", bob.bodies())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the session did not end")
	}
	if got := bob.bodies(); !slices.Equal(got, []string{want}) {
		t.Fatalf("Bob got %q, want %q once", got, want)
	}
}
