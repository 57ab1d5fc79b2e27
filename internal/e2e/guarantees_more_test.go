package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// hubProc is a hub run by `relay up --detach` in a RELAY_HOME of its own:
// a separate process, as a user runs it, that a test can stop (kill -STOP)
// or take down and bring back (relay down, relay up) on the same storage
// and port.
type hubProc struct {
	t    *testing.T
	home string
	env  []string // for relay commands and wrappers: this home, its hub
}

// startHubProc runs relay up --detach in a fresh home.
func startHubProc(t *testing.T) *hubProc {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	hp := &hubProc{t: t, home: home, env: append(baseEnv(t),
		"RELAY_HOME="+home, "RELAY_HUB=", "RELAY_TOKEN=", "TERM=xterm-256color", "PS1=$ ")}
	hp.up()
	t.Cleanup(func() { _, _ = hp.relay("down") })
	return hp
}

// relay runs a relay command in the hub's home.
func (hp *hubProc) relay(args ...string) (string, error) {
	cmd := exec.Command(relayBin, args...)
	cmd.Env = hp.env
	out, err := runWithin(hp.t, cmd, 60*time.Second)
	return string(out), err
}

// up starts the hub (again) and waits until it answers.
func (hp *hubProc) up() {
	hp.t.Helper()
	if out, err := hp.relay("up", "--detach", "--dashboard", "off"); err != nil {
		hp.t.Fatalf("relay up --detach: %v\n%s", err, out)
	}
	testutil.WaitFor(hp.t, 30*time.Second, 50*time.Millisecond, func() error {
		_, err := hub.Discover(hp.home)
		return err
	})
}

// down stops the hub with relay down.
func (hp *hubProc) down() {
	hp.t.Helper()
	if out, err := hp.relay("down"); err != nil {
		hp.t.Fatalf("relay down: %v\n%s", err, out)
	}
}

// pid is the hub process's id, from its record in the home.
func (hp *hubProc) pid() int {
	hp.t.Helper()
	b, err := os.ReadFile(filepath.Join(hub.Dir(hp.home), "hub.json"))
	if err != nil {
		hp.t.Fatal(err)
	}
	var st struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.PID <= 0 {
		hp.t.Fatalf("hub.json: pid %d, %v:\n%s", st.PID, err, b)
	}
	return st.PID
}

// sender connects to the hub as name, for sending many messages without
// a process each.
func (hp *hubProc) sender(name string) *bus.Client {
	hp.t.Helper()
	ep, err := hub.Discover(hp.home)
	if err != nil {
		hp.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := bus.Connect(ctx, bus.Options{URL: ep.URL, Token: ep.Token, TLSPin: ep.TLSPin, Workspace: bus.DefaultWorkspace, Name: name})
	if err != nil {
		hp.t.Fatal(err)
	}
	hp.t.Cleanup(func() { c.Close() })
	return c
}

// agent wraps argv as name with the hub of the home (found there, as
// relay wrap finds it without --hub).
func (hp *hubProc) agent(name string, argv ...string) *ptytest.Term {
	hp.t.Helper()
	return ptytest.Start(hp.t, ptytest.Options{Env: hp.env, Cols: 100, Rows: 30},
		append([]string{relayBin, "wrap", "--name", name, "--"}, argv...)...)
}

// waitAgents waits until the hub lists every name as online.
func (hp *hubProc) waitAgents(names ...string) {
	hp.t.Helper()
	testutil.WaitFor(hp.t, 30*time.Second, 100*time.Millisecond, func() error {
		out, err := hp.relay("agents")
		if err != nil {
			return err
		}
		for _, n := range names {
			if !strings.Contains(out, n) {
				return fmt.Errorf("%s not in:\n%s", n, out)
			}
		}
		return nil
	})
}

// numbered returns n bodies prefix-000, prefix-001, ... from first on.
func numbered(prefix string, first, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%04d", prefix, first+i)
	}
	return out
}

// typedOrder returns, in the order they were typed in, the bodies of
// bodies found in file's lines (one per typed message).
func typedOrder(file string, bodies []string) []string {
	data, _ := os.ReadFile(file)
	want := make(map[string]bool, len(bodies))
	for _, b := range bodies {
		want[b] = true
	}
	var got []string
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && want[f[len(f)-1]] {
			got = append(got, f[len(f)-1])
		}
	}
	return got
}

// checkOnceInOrder fails t unless got is bodies, each once, in order.
func checkOnceInOrder(t *testing.T, got, bodies []string) {
	t.Helper()
	seen := map[string]int{}
	for _, b := range got {
		seen[b]++
	}
	var dups, missing []string
	for _, b := range bodies {
		switch n := seen[b]; {
		case n == 0:
			missing = append(missing, b)
		case n > 1:
			dups = append(dups, fmt.Sprintf("%s×%d", b, n))
		}
	}
	if len(dups) > 0 || len(missing) > 0 {
		t.Errorf("%d lines for %d messages: duplicated %v, missing %v", len(got), len(bodies), dups, missing)
		return
	}
	for i := range got {
		if got[i] != bodies[i] {
			t.Errorf("typed out of order: line %d is %s, want %s", i, got[i], bodies[i])
			return
		}
	}
}

// TestHubStallTypesOnce is issue 20's stall of the hub: 100 messages wait
// for a line-reading shell when its hub (a relay up process) is stopped
// with kill -STOP for 15 s, longer than the 10 s ack wait (a laptop
// suspend, a partition from a team hub). After kill -CONT every message is
// typed in exactly once and in order, whatever the hub delivers again.
func TestHubStallTypesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("a 15 s stall of the hub")
	}
	hp := startHubProc(t)
	file := filepath.Join(t.TempDir(), "S.txt")
	hp.agent("BS", "sh", "-c", readerScript, "reader", file)
	hp.waitAgents("BS")
	human := hp.sender("human")
	bodies := numbered("hubstall", 0, 100)
	sendAll(t, human, "BS", bodies)

	pid := hp.pid()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	t.Cleanup(func() {
		if stopped {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	// The stall itself is the reproduction: longer than the ack wait.
	time.Sleep(bus.DefaultAckWait + 5*time.Second)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false

	testutil.WaitFor(t, 90*time.Second, 100*time.Millisecond, func() error {
		if n := len(typedOrder(file, bodies)); n < len(bodies) {
			return fmt.Errorf("%d lines of %d messages typed in", n, len(bodies))
		}
		return nil
	})
	// A sentinel sent after everything, and then one more ack wait: once
	// both are past, any copy the hub delivered again had its chance to be
	// typed.
	sendAll(t, human, "BS", []string{"hubstall-sentinel"})
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if len(typedOrder(file, []string{"hubstall-sentinel"})) == 0 {
			return fmt.Errorf("sentinel not typed in yet")
		}
		return nil
	})
	checkOnceInOrder(t, typedOrder(file, bodies), bodies)
}

// TestHubRestartDrains is issue 20's slow drain: 300 messages to a wrapped
// shell, with its hub taken down (relay down) and brought back (relay up,
// the same RELAY_HOME) after the first 100. Each is typed in exactly once
// and in order, and the last within 15 s of the restart.
func TestHubRestartDrains(t *testing.T) {
	hp := startHubProc(t)
	file := filepath.Join(t.TempDir(), "R.txt")
	hp.agent("BR", "sh", "-c", readerScript, "reader", file)
	hp.waitAgents("BR")
	bodies := numbered("restart", 0, 300)
	sendAll(t, hp.sender("human"), "BR", bodies[:100])

	hp.down()
	hp.up()
	restarted := time.Now()
	sendAll(t, hp.sender("human2"), "BR", bodies[100:])
	t.Logf("typed %d of 300 when the last was sent, %v after the restart", len(typedOrder(file, bodies)), time.Since(restarted).Round(10*time.Millisecond))

	var last time.Duration
	testutil.WaitFor(t, 90*time.Second, 50*time.Millisecond, func() error {
		if n := len(typedOrder(file, bodies)); n < len(bodies) {
			return fmt.Errorf("%d of %d messages typed in", n, len(bodies))
		}
		last = time.Since(restarted)
		return nil
	})
	t.Logf("the last of 300 messages typed in %v after the hub's restart", last.Round(10*time.Millisecond))
	if last > 15*time.Second {
		t.Errorf("the last message was typed %v after the hub's restart; want within 15 s", last.Round(time.Second))
	}
	// A sentinel: once it is in, any copy delivered again had its chance.
	sendAll(t, hp.sender("human3"), "BR", []string{"restart-sentinel"})
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if len(typedOrder(file, []string{"restart-sentinel"})) == 0 {
			return fmt.Errorf("sentinel not typed in yet")
		}
		return nil
	})
	checkOnceInOrder(t, typedOrder(file, bodies), bodies)
}

// TestManyLineBodyToShell is issue 21's 3.6 KB body of 1,790 lines sent to
// a wrapped shell: each line break is typed as a 5-byte ` ⏎ `, so the cap
// must hold on what is typed. The shell reads every line whole (none over
// the terminal's 4,095 bytes, valid UTF-8, nothing cut in a ⏎), the last
// one ends with the note that says how to read the rest, and nothing is
// lost without that note.
func TestManyLineBodyToShell(t *testing.T) {
	tm := newTeam(t)
	file := filepath.Join(t.TempDir(), "B.txt")
	tm.agent("Bob", "sh", "-c", readerScript, "reader", file)
	tm.waitAgents("Bob")
	body := strings.Repeat("y\n", 1789) + "END"
	cmd := exec.Command(relayBin, "send", "--from", "Alice", "Bob", "-")
	cmd.Env = tm.env
	cmd.Stdin = strings.NewReader(body)
	if out, err := runWithin(t, cmd, 30*time.Second); err != nil {
		t.Fatalf("relay send: %v\n%s", err, out)
	}
	if out, err := tm.relay("send", "--from", "Alice", "Bob", "manylines-sentinel"); err != nil {
		t.Fatalf("relay send: %v\n%s", err, out)
	}
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if data, _ := os.ReadFile(file); !strings.Contains(string(data), "manylines-sentinel") {
			return fmt.Errorf("the sentinel after the long body was not typed in yet")
		}
		return nil
	})
	data, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var msg []string
	for _, l := range lines {
		if !utf8.ValidString(l) {
			t.Errorf("the shell read invalid UTF-8 (a ⏎ cut in the middle): %q", l[max(0, len(l)-40):])
		}
		if len(l) >= 4095 {
			t.Errorf("the shell read a line of %d bytes: the terminal cut it at 4,095", len(l))
		}
		if !strings.Contains(l, "manylines-sentinel") {
			msg = append(msg, l)
		}
	}
	if len(msg) == 0 {
		t.Fatalf("the long body never arrived:\n%s", data)
	}
	last := msg[len(msg)-1]
	if !strings.Contains(last, "more bytes, the whole message: relay log --id ") || !strings.HasSuffix(last, "]") {
		t.Errorf("the last line of the long body has no whole note on how to read the rest: %q", last[max(0, len(last)-120):])
	}
	if !strings.HasPrefix(msg[0], " # [relay] Message from ") {
		t.Errorf("the body did not arrive as a shell comment: %q", msg[0][:min(len(msg[0]), 80)])
	}
}
