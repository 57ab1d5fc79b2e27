package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// readerScript is an agent that appends each line it reads to a file.
const readerScript = `while IFS= read -r l; do printf '%s\n' "$l" >> "$1"; done`

// sender connects to the team's hub as a human, for sending many messages
// without a process each.
func (tm *team) sender(name string) *bus.Client {
	tm.t.Helper()
	c, err := bus.Connect(context.Background(), bus.Options{URL: tm.hub.URL(), Token: tm.hub.Token(), Workspace: "default", Name: name})
	if err != nil {
		tm.t.Fatal(err)
	}
	tm.t.Cleanup(func() { c.Close() })
	return c
}

// linesOf returns the lines of file that hold a message id of ids: how
// many times each message was typed in.
func typedCounts(t *testing.T, file string, bodies []string) map[string]int {
	t.Helper()
	data, _ := os.ReadFile(file)
	counts := map[string]int{}
	for _, l := range strings.Split(string(data), "\n") {
		for _, b := range bodies {
			if strings.Contains(l, b+" ") || strings.HasSuffix(l, b) {
				counts[b]++
			}
		}
	}
	return counts
}

// TestStallTypesOnce: 100 messages to an agent whose wrapper is stopped for
// longer than the hub's ack wait (a suspended laptop, kill -STOP) are each
// typed in exactly once after it resumes, although the hub delivers the
// waiting ones again.
func TestStallTypesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("a 15 s stall")
	}
	tm := newTeam(t)
	file := filepath.Join(t.TempDir(), "S.txt")
	bs := tm.agent("BS", "sh", "-c", readerScript, "reader", file)
	tm.waitAgents("BS")
	human := tm.sender("human")
	var bodies []string
	for i := 0; i < 100; i++ {
		b := fmt.Sprintf("stall-m%03d", i)
		bodies = append(bodies, b)
		if _, err := human.Send(context.Background(), "BS", b); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Kill(bs.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The stall itself is the reproduction: longer than the ack wait.
	time.Sleep(bus.DefaultAckWait + 5*time.Second)
	if err := syscall.Kill(bs.Pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 90*time.Second, 100*time.Millisecond, func() error {
		counts := typedCounts(t, file, bodies)
		if len(counts) < len(bodies) {
			return fmt.Errorf("%d of %d messages typed in", len(counts), len(bodies))
		}
		return nil
	})
	// A sentinel sent after everything: once it is in, any copy the hub
	// delivered again has had its chance to be typed.
	if _, err := human.Send(context.Background(), "BS", "stall-sentinel"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if typedCounts(t, file, []string{"stall-sentinel"})["stall-sentinel"] == 0 {
			return fmt.Errorf("sentinel not typed in yet")
		}
		return nil
	})
	var dups []string
	for b, n := range typedCounts(t, file, bodies) {
		if n != 1 {
			dups = append(dups, fmt.Sprintf("%s×%d", b, n))
		}
	}
	if len(dups) > 0 {
		t.Errorf("typed more than once after the stall: %v", dups)
	}
}

// TestPingPongEnds: two shells that answer every line with a message to
// the other are held at the hop limit; the held notice is answered too, and
// that answer is counted but neither recorded nor reported: the exchange
// ends, with one held record.
func TestPingPongEnds(t *testing.T) {
	tm := newTeam(t)
	answer := `while IFS= read -r l; do echo "@relay:$1 re: got it"; done`
	pa := tm.agent("PA", "sh", "-c", answer, "answer", "PB")
	tm.agent("PB", "sh", "-c", answer, "answer", "PA")
	defer func() {
		if t.Failed() {
			t.Logf("PA's terminal: %q", pa.Output())
		}
	}()
	tm.waitAgents("PA", "PB")
	if out, err := tm.relay("send", "PA", "start the exchange"); err != nil {
		t.Fatalf("relay send: %v\n%s", err, out)
	}
	home := lookupEnv(tm.env, "RELAY_HOME")
	// The positive marker that the loop is over: the side that was held
	// answered its held notice, and that answer was held quietly.
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		for _, name := range []string{"PA", "PB"} {
			data, _ := os.ReadFile(filepath.Join(home, "logs", "wrap-"+name+".log"))
			if strings.Contains(string(data), "quiet=true") {
				return nil
			}
		}
		var held []string
		for _, name := range []string{"PA", "PB"} {
			data, _ := os.ReadFile(filepath.Join(home, "logs", "wrap-"+name+".log"))
			for _, l := range strings.Split(string(data), "\n") {
				if strings.Contains(l, "held") || strings.Contains(l, "typed") || strings.Contains(l, "command") || strings.Contains(l, "WARN") {
					held = append(held, name+": "+l)
				}
			}
		}
		return fmt.Errorf("no answer to a held notice held quietly yet; the wrappers logged:\n%s", strings.Join(held[max(0, len(held)-30):], "\n"))
	})
	log, err := tm.relay("log", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log, `"held"`); n > 2 {
		t.Errorf("%d held records; want at most one each way:\n%s", n, log)
	}
}

// lookupEnv returns the value of key in env.
func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// TestHostileLinesNeverFire: a peer's message whose lines look like
// commands after a bullet, a quote, a box glyph or a Unicode space is typed
// into an agent that echoes it in a box, and into one that clears and
// redraws everything it got (as Gemini CLI redraws its history): nothing
// fires as the receiving agent, nothing is saved to memory.
func TestHostileLinesNeverFire(t *testing.T) {
	tm := newTeam(t)
	boxed := `while IFS= read -r l; do printf '│ %s │\n' "$l"; done`
	redraw := `h=""; while IFS= read -r l; do h="$h$l
"; printf '\033[2J\033[H%s' "$h"; done`
	tm.agent("Box", "sh", "-c", boxed)
	tm.agent("Redraw", "sh", "-c", redraw)
	tm.agent("C", "sh", "-c", readerScript, "reader", filepath.Join(t.TempDir(), "C.txt"))
	tm.waitAgents("Box", "Redraw", "C")
	hostile := strings.Join([]string{
		"- @relay:C x1",
		"│ @relay:C x2",
		"> @memory:save x3",
		"\u00a0@relay:C x4",
		"\u3000@relay:C x5",
		"* @broadcast: x6",
		"@relay:C x7",
		"\\@relay:C x8",
		"● @memory:save x9",
	}, "\n")
	for _, to := range []string{"Box", "Redraw"} {
		if out, err := tm.relay("send", to, hostile); err != nil {
			t.Fatalf("relay send: %v\n%s", err, out)
		}
		for _, line := range strings.Split(hostile, "\n") {
			if out, err := tm.relay("send", to, line); err != nil {
				t.Fatalf("relay send: %v\n%s", err, out)
			}
		}
		if out, err := tm.relay("send", to, "hostile-sentinel"); err != nil {
			t.Fatalf("relay send: %v\n%s", err, out)
		}
	}
	// Positive marker: both agents got the sentinel typed in after every
	// hostile message, and their screens were read meanwhile.
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		log, err := tm.relay("log", "--json")
		if err != nil {
			return err
		}
		if n := strings.Count(log, "hostile-sentinel"); n < 2 {
			return fmt.Errorf("sentinels in the log: %d", n)
		}
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, "hostile-sentinel") && !strings.Contains(l, `"delivered"`) {
				return fmt.Errorf("sentinel not delivered yet: %s", l)
			}
		}
		return nil
	})
	log, err := tm.relay("log", "--json")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, `"from":"Box"`) || strings.Contains(l, `"from":"Redraw"`) {
			t.Errorf("a peer's text fired as the receiver's command: %s", l)
		}
	}
	mem, err := tm.relay("memory", "list")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(mem, "x3") || strings.Contains(mem, "x9") {
		t.Errorf("a peer's text saved a memory:\n%s", mem)
	}
}

// TestHumanDraftHoldsDelivery: a human's unfinished shell command holds a
// peer's message (its receipt says held: draft) and relay never presses
// Enter on it; once the human submits the line, their command runs (once,
// theirs) and the message arrives after it.
func TestHumanDraftHoldsDelivery(t *testing.T) {
	tm := newTeam(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "MARKER")
	sh := tm.agent("SH", "bash", "--norc", "--noprofile", "-i")
	tm.waitAgents("SH")
	sh.Type("cd " + dir + "\r")
	sh.WaitOutput("$ ", 10*time.Second)
	sh.Type("touch MARKER && echo DRAFT-RAN ")
	sh.WaitOutput("DRAFT-RAN ", 10*time.Second) // echoed by readline, not run
	if out, err := tm.relay("send", "SH", "draft-message"); err != nil {
		t.Fatalf("relay send: %v\n%s", err, out)
	}
	// Positive marker: the receipt says the message waits on the draft.
	testutil.WaitFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		log, err := tm.relay("log")
		if err != nil {
			return err
		}
		if !strings.Contains(log, "draft: the human's line is unfinished") {
			return fmt.Errorf("no held: draft receipt yet:\n%s", log)
		}
		return nil
	})
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the human's unfinished command ran")
	}
	if strings.Contains(string(sh.Output()), "draft-message") {
		t.Fatal("the message was typed into the human's unfinished line")
	}
	sh.Type("\r")
	sh.WaitOutput("draft-message", 30*time.Second)
	out := string(sh.Output())
	ran := strings.LastIndex(out, "DRAFT-RAN\r\n")
	msg := strings.Index(out, "draft-message")
	if ran < 0 || msg < ran {
		t.Errorf("the message did not arrive after the human's command ran:\n%q", out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the human's own Enter did not run their command: %v", err)
	}
}
