package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// slowReaderScript reads lines like readerScript, and takes a second over
// each one after noting it: a line typed meanwhile waits in the terminal.
const slowReaderScript = `while IFS= read -r l; do printf '%s\n' "$l" >> "$1"; sleep 1; done`

// TestTermEndsAfterTypedRead is the chaos soak's lost message: a wrapper
// ended with SIGTERM right after it typed a message (journaled, receipted
// delivered) passed the signal on while the message still waited in the
// terminal's input queue, behind a line the shell was busy with, and the
// kernel dropped it with the shell. Now the wrapper stops typing and lets
// the child read its queue first: every message is read exactly once, in
// this session or the next.
func TestTermEndsAfterTypedRead(t *testing.T) {
	tm := newTeam(t)
	file := filepath.Join(t.TempDir(), "eve.txt")
	eve := tm.agent("Eve", "sh", "-c", slowReaderScript, "reader", file)
	tm.waitAgents("Eve")
	human := tm.sender("human")
	bodies := numbered("unread", 0, 2)
	var last bus.Envelope
	for _, b := range bodies {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		env, err := human.Send(ctx, "Eve", b)
		cancel()
		if err != nil {
			t.Fatalf("send %s: %v", b, err)
		}
		last = env
	}
	// Both typed: the shell read the first and sleeps over it; the
	// second waits in the terminal.
	testutil.WaitFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		for _, l := range strings.Split(tm.wrapperLog(), "\n") {
			if strings.Contains(l, `msg=typed`) && strings.Contains(l, last.ID) {
				return nil
			}
		}
		return fmt.Errorf("%s not typed yet", last.ID)
	})
	eve.Signal(syscall.SIGTERM)
	eve.Wait(15 * time.Second)

	// The next session gets what the last one did not type, and a
	// sentinel: once it is in, anything delivered again had its chance.
	tm.agent("Eve", "sh", "-c", readerScript, "reader", file)
	tm.waitAgents("Eve")
	sentinel := numbered("unread-last", 0, 1)
	sendAll(t, human, "Eve", sentinel)
	all := append(bodies, sentinel...)
	testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if got := typedOrder(file, sentinel); len(got) == 0 {
			return fmt.Errorf("the sentinel was not read yet")
		}
		return nil
	})
	if got := typedOrder(file, all); len(got) != len(all) {
		t.Errorf("read %q of %q\n%s", got, all, tm.wrapperLog())
	}
	checkOnceInOrder(t, typedOrder(file, all), all)
}
