package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/ptytest"
)

// signalRuns is how many times each signal is sent at start: the moment it
// lands (before the handlers, between raw mode and them, after) varies
// from run to run.
const signalRuns = 20

// TestWrapSignalAtStart: a signal that ends a session, sent at any moment
// of start-up, leaves the human's terminal in the mode it had before relay
// started (stty -g before == after), and relay exits with the conventional
// status 128+n. The agent signals relay itself, as soon as it runs (issue
// 29: relay used to die of a SIGHUP that came after raw mode and before its
// handlers, leaving the terminal raw; a SIGTERM or SIGINT then was lost
// and relay waited for the agent); or the test sends the signal after a
// delay spread over start-up.
func TestWrapSignalAtStart(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("no perl")
	}
	signals := []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT}
	for _, sig := range signals {
		runs := signalRuns
		if sig == syscall.SIGINT || sig == syscall.SIGQUIT {
			runs = signalRuns / 4
		}
		for i := range runs {
			t.Run(fmt.Sprintf("agent sends %v/%d", sig, i), func(t *testing.T) {
				t.Parallel()
				tm := wrap(t, ptytest.Options{}, agentSignalling(sig)...)
				checkSignalled(t, tm, sig)
			})
		}
	}
	// Not SIGQUIT: before relay's main runs it is the Go runtime's (a
	// goroutine dump), with the terminal not touched yet.
	for _, sig := range signals[:3] {
		for i := range 5 {
			delay := time.Duration(i) * 40 * time.Millisecond
			t.Run(fmt.Sprintf("%v after %v", sig, delay), func(t *testing.T) {
				t.Parallel()
				tm := wrap(t, ptytest.Options{}, "perl", "-e", `$SIG{INT} = $SIG{QUIT} = "DEFAULT"; sleep 30`)
				time.Sleep(delay) // a moment of start-up, not a wait for something
				tm.Signal(sig)
				checkSignalled(t, tm, sig)
			})
		}
	}
}

// TestWrapSignalBeforeSession: a SIGTERM or SIGINT that comes while relay
// wrap is still reading its configuration, before the session catches the
// signals that end it, ends relay with the signal's status and starts no
// agent. The user configuration file is a FIFO, so relay waits in its read
// until the test, having seen relay open it, has sent the signal. (relay
// used to catch both for every command from its first step and swallow
// them for wrap: the agent then started and relay waited for it, a CI
// failure of TestWrapSignalAtStart.)
func TestWrapSignalBeforeSession(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			xdg := t.TempDir()
			fifo := filepath.Join(xdg, "relay", "config.toml")
			if err := os.MkdirAll(filepath.Dir(fifo), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(t.TempDir(), "agent-ran")
			tm := wrap(t, ptytest.Options{Env: env(t, "XDG_CONFIG_HOME="+xdg)},
				"sh", "-c", "touch "+marker+"; sleep 30")
			// Opening the FIFO for writing returns once relay has opened
			// it for reading: relay is inside its configuration read.
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			// relay ends before the FIFO gives it an end of file: its read
			// cannot return, so the signal is taken inside it, however late
			// the kernel hands it to one of relay's threads. (Closed first,
			// a busy machine once let relay read on and catch the signal
			// only as the agent started.)
			tm.Signal(sig)
			checkSignalled(t, tm, sig)
			w.Close()
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the agent ran after %v came before the session started", sig)
			}
		})
	}
}

// TestWrapSignalAtExit: a signal that lands while relay shuts down (the
// agent exits as it sends it) leaves the terminal as relay found it; relay
// exits with the agent's status, or the signal's when it came first.
func TestWrapSignalAtExit(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		for i := range signalRuns {
			t.Run(fmt.Sprintf("%v/%d", sig, i), func(t *testing.T) {
				t.Parallel()
				tm := wrap(t, ptytest.Options{}, "sh", "-c", fmt.Sprintf("p=$PPID; (trap '' HUP; sleep 0.0%d; kill -%d $p) & exit 3", i%10, sig))
				if got := tm.Wait(20 * time.Second); got != 3 && got != 128+int(sig) {
					t.Errorf("exit status %d, want 3 or %d; output %q", got, 128+int(sig), tail(tm.Output(), 2000))
				}
				if got, want := tm.Mode(), tm.InitialMode(); got != want {
					t.Errorf("terminal mode after %v at exit:\n got %v\nwant %v", sig, got, want)
				}
			})
		}
	}
}

// agentSignalling is an agent that sends sig to relay (its parent) as soon
// as it runs and then waits. SIGHUP and SIGTERM come from sh, as in the
// issue; SIGINT and SIGQUIT, which relay passes on to the agent as the keys
// would, from perl, which dies of them (sh -c catches SIGINT and may go
// on).
func agentSignalling(sig syscall.Signal) []string {
	if sig == syscall.SIGINT || sig == syscall.SIGQUIT {
		return []string{"perl", "-e", fmt.Sprintf(`$SIG{INT} = $SIG{QUIT} = "DEFAULT"; kill %d, getppid(); sleep 30`, sig)}
	}
	return []string{"sh", "-c", fmt.Sprintf("kill -%d $PPID; sleep 30", sig)}
}

// checkSignalled checks that relay ended with the status of sig and left
// the terminal's mode as it found it.
func checkSignalled(t *testing.T, tm *ptytest.Term, sig syscall.Signal) {
	t.Helper()
	if got, want := tm.Wait(20*time.Second), 128+int(sig); got != want {
		t.Errorf("exit status %d, want %d; output %q", got, want, tail(tm.Output(), 2000))
	}
	if got, want := tm.Mode(), tm.InitialMode(); got != want {
		t.Errorf("terminal mode after %v at start:\n got %v\nwant %v", sig, got, want)
	}
}

// tail returns the last n bytes of p.
func tail(p []byte, n int) []byte {
	if len(p) > n {
		return p[len(p)-n:]
	}
	return p
}
