package wrapper

import (
	"errors"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/procfs"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestCtrlUKeepsRightOfCursor is issue 30.5's reproduction: in bash the
// human types a line, moves left over its last word and presses Ctrl-U;
// the word stays in bash's line, so Inject refuses. Ctrl-K then empties
// it, and Inject goes through.
func TestCtrlUKeepsRightOfCursor(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	h := startHuman(t, t.TempDir(), "bash", "--norc", "--noprofile", "-i")
	h.press("echo READY-$((6*7))\r")
	h.waitScreen("READY-42")
	h.press("git push --force origin main")
	h.line(true)
	h.pressEchoed("\x1b[D\x1b[D\x1b[D\x1b[D")
	h.pressEchoed("\x15")
	ran, err := h.inject("# [relay] Bob: hello")
	if !errors.Is(err, ErrHumanLine) || ran {
		t.Fatalf("Inject with main right of the cursor: ran %v, err %v; want not run, ErrHumanLine", ran, err)
	}
	h.press("\x0b") // Ctrl-K: nothing is left
	h.line(false)
	if _, err := h.inject("echo INJECTED-$((40+2))"); err != nil {
		t.Fatal(err)
	}
	h.waitScreen("INJECTED-42")
}

// pressEchoed types keys and waits until the child answered on the
// screen: the wrapper wrote them to the child, so their effect on the
// human's line is recorded.
func (h *human) pressEchoed(keys string) {
	h.t.Helper()
	n := len(h.screen.String())
	h.press(keys)
	testutil.WaitFor(h.t, 10*time.Second, 5*time.Millisecond, func() error {
		if len(h.screen.String()) == n {
			return errors.New("no echo yet")
		}
		return nil
	})
}

// TestForeground: the child holds its terminal while bash waits at its
// prompt; a job bash runs in the foreground holds it while it runs.
func TestForeground(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	h := startHuman(t, t.TempDir(), "bash", "--norc", "--noprofile", "-i")
	h.press("echo READY-$((6*7))\r")
	h.waitScreen("READY-42")
	fg := func(want bool) {
		t.Helper()
		testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
			pg, err := h.s.Foreground()
			if err != nil {
				return err
			}
			if (pg == h.s.Pid()) != want {
				return fmt.Errorf("foreground group %d, child %d: want the child's %v; screen:\n%q", pg, h.s.Pid(), want, h.screen.String())
			}
			return nil
		})
	}
	fg(true)
	h.press("sleep 60\r")
	fg(false)
	// Ctrl-C once the job runs sleep: between bash's fork and the exec,
	// the child may not die of it.
	testutil.WaitFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		pg, err := h.s.Foreground()
		if err != nil {
			return err
		}
		if name, err := procfs.Comm(pg); errors.Is(err, procfs.ErrUnsupported) || name == "sleep" {
			return nil
		}
		return fmt.Errorf("the job does not run sleep yet")
	})
	h.press("\x03")
	fg(true)
}
