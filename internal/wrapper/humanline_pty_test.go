package wrapper

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// human is a wrapped child on a real pty, with the test as the human: its
// keys go in through a pipe, the screen is a buffer, and each change of
// the human's line arrives on lines.
type human struct {
	t      *testing.T
	s      *Session
	keys   *os.File
	screen *testutil.Buffer // the human's screen
	lines  chan bool
}

func startHuman(t *testing.T, dir string, argv ...string) *human {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &human{t: t, keys: w, screen: &testutil.Buffer{}, lines: make(chan bool, 64)}
	s, err := Start(Options{
		Command:     argv,
		Dir:         dir,
		Env:         append(os.Environ(), "HOME="+dir, "PS1=$ ", "TERM=xterm"),
		Stdin:       r,
		Stdout:      h.screen,
		OnHumanLine: func(unfinished bool) { h.lines <- unfinished },
	})
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	t.Cleanup(func() {
		s.terminate(syscall.SIGHUP) // an interactive bash ignores SIGTERM
		w.Close()
		s.Wait()
		r.Close()
	})
	return h
}

// press types keys as one read of the keyboard.
func (h *human) press(keys string) {
	h.t.Helper()
	if _, err := h.keys.Write([]byte(keys)); err != nil {
		h.t.Fatalf("type %q: %v", keys, err)
	}
}

// line waits for the next change of the human's line and checks it.
func (h *human) line(want bool) {
	h.t.Helper()
	select {
	case got := <-h.lines:
		if got != want {
			h.t.Fatalf("OnHumanLine(%v), want %v", got, want)
		}
	case <-time.After(10 * time.Second):
		h.t.Fatalf("no OnHumanLine(%v) within 10s; screen:\n%s", want, h.screen.String())
	}
	if got := h.s.Input().HumanLine(); got != want {
		h.t.Fatalf("HumanLine() = %v after OnHumanLine(%v)", got, want)
	}
}

// waitScreen waits until the screen shows want.
func (h *human) waitScreen(want string) {
	h.t.Helper()
	h.waitScreenCount(want, 1)
}

// waitScreenCount waits until the screen shows want n times.
func (h *human) waitScreenCount(want string, n int) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(h.screen.String(), want) < n {
		if time.Now().After(deadline) {
			h.t.Fatalf("screen never showed %q %d times:\n%s", want, n, h.screen.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// inject types text and Enter as relay does, and reports whether its
// function ran.
func (h *human) inject(text string) (ran bool, err error) {
	err = h.s.Input().Inject(func(write func([]byte) error) error {
		ran = true
		return write([]byte(text + "\r"))
	})
	return ran, err
}

// TestHumanLineHoldsInject: a human draft makes HumanLine true and Inject
// refuses without typing; Enter, Ctrl-C and Ctrl-U each clear the line,
// each flip is notified, and Inject goes through again.
func TestHumanLineHoldsInject(t *testing.T) {
	for _, c := range []struct{ name, key string }{
		{"Enter", "\r"}, {"Ctrl-C", "\x03"}, {"Ctrl-U", "\x15"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// cat on a raw terminal, as an agent's TUI reads keys: every
			// byte reaches it and comes back on the screen. (In canonical
			// mode the kernel's flush on Ctrl-C may drop what follows it.)
			h := startHuman(t, t.TempDir(), "sh", "-c", `stty raw -echo; echo READY; exec cat`)
			h.waitScreen("READY")
			if h.s.Input().HumanLine() {
				t.Fatal("HumanLine true before any key")
			}
			h.press("draft")
			h.line(true)
			ran, err := h.inject("from relay")
			if !errors.Is(err, ErrHumanLine) || ran {
				t.Fatalf("Inject during a draft: ran %v, err %v; want not run, ErrHumanLine", ran, err)
			}
			h.press(c.key)
			h.line(false)
			if ran, err := h.inject("from-relay"); err != nil || !ran {
				t.Fatalf("Inject after %s: ran %v, err %v", c.name, ran, err)
			}
			h.waitScreen("from-relay\r") // cat's copy
			select {
			case v := <-h.lines:
				t.Fatalf("OnHumanLine(%v) from relay's own typing", v)
			default:
			}
		})
	}
}

// TestHumanDraftNeverRuns is issue 20's reproduction: in an interactive
// bash the human types a command without Enter; relay's injection of a
// comment and Enter is refused, so the human's command never runs; after
// the human clears the line with Ctrl-U, relay's injection goes through.
func TestHumanDraftNeverRuns(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	h := startHuman(t, dir, "bash", "--norc", "--noprofile", "-i")
	h.press("echo READY-$((6*7))\r")
	h.waitScreen("READY-42")
	h.press("touch MARKER && echo DRAFT-RAN ")
	h.line(true)
	h.waitScreen("touch MARKER && echo DRAFT-RAN ")
	ran, err := h.inject("# [relay] Bob: hello")
	if !errors.Is(err, ErrHumanLine) || ran {
		t.Errorf("Inject on the human's draft: ran %v, err %v; want not run, ErrHumanLine", ran, err)
	}
	h.press("\x15")
	if !ran {
		h.line(false)
	}
	if ran, err := h.inject("# [relay] Bob: hello"); err != nil || !ran {
		t.Fatalf("Inject after Ctrl-U: ran %v, err %v", ran, err)
	}
	// A later line that runs is the positive sign that bash has read
	// everything before it.
	if _, err := h.inject("echo INJECTED-$((40+2))"); err != nil {
		t.Fatal(err)
	}
	h.waitScreen("INJECTED-42")
	if _, err := os.Stat(filepath.Join(dir, "MARKER")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the human's draft ran: MARKER: %v", err)
	}
	if strings.Contains(h.screen.String(), "DRAFT-RAN\r\n") {
		t.Errorf("the human's draft ran; screen:\n%s", h.screen.String())
	}
}
